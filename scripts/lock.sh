#!/usr/bin/env bash
# Regenerates the lock files: the exact versions, with hashes, that the image and CI install (pyproject.toml keeps
# the ranges for library users). Commit the result; CI then builds and tests the image with exactly these versions.
#
#   scripts/lock.sh                                # after editing pyproject.toml: re-resolve, keeping current pins
#   scripts/lock.sh --upgrade-package playwright   # move one package to its newest version within the ranges
#   scripts/lock.sh --upgrade                      # move everything
#
# requirements/runtime.txt  what the image installs: the dependencies, plus the build backend that installs
#                           preview-qa itself without reaching for an unpinned one
# requirements/test.txt     what CI installs: the same pins, plus the test extra
#
# Resolved for Linux and the oldest supported Python (3.11: Debian bookworm's, which CI's stand-in base has), then
# checked against 3.12 (the image's), so both install the same versions.
set -euo pipefail
cd "$(dirname "$0")/.."

uv_version=0.13.9  # the resolver is pinned too, so two people locking the same ranges get the same file
uv="$(command -v uv || true)"
if [ -z "$uv" ] || [ "$("$uv" --version | cut -d' ' -f2)" != "$uv_version" ]; then
  tools="${XDG_CACHE_HOME:-$HOME/.cache}/preview-qa/uv-$uv_version"
  [ -x "$tools/bin/uv" ] || { python3 -m venv "$tools" && "$tools/bin/pip" install --quiet "uv==$uv_version"; }
  uv="$tools/bin/uv"
fi

build_requires="$(python3 -c 'import tomllib; print(*tomllib.load(open("pyproject.toml", "rb"))["build-system"]["requires"], sep="\n")')"
compile=(pip compile --quiet --python-platform linux --no-strip-extras --custom-compile-command scripts/lock.sh)
lock() {  # lock <file> [uv options...]: the build requirements arrive on stdin ("-")
  local file="$1"; shift
  "$uv" "${compile[@]}" --python-version 3.11 --generate-hashes pyproject.toml - "$@" -o "$file" <<< "$build_requires"
  local on_312
  on_312="$("$uv" "${compile[@]}" --python-version 3.12 --no-header --no-annotate pyproject.toml - "$@" -c "$file" \
            <<< "$build_requires")"
  if ! diff <(sed -n 's/^\([a-z0-9][^ ]*==[^ ]*\).*/\1/p' "$file") <(sed -n 's/^\([a-z0-9][^ ]*==[^ ]*\).*/\1/p' <<< "$on_312"); then
    echo "lock.sh: Python 3.12 needs other packages than $file pins (diff above); pin them in pyproject.toml" >&2
    exit 1
  fi
}
lock requirements/runtime.txt "$@"
lock requirements/test.txt --extra test -c requirements/runtime.txt "$@"
echo "lock.sh: wrote requirements/runtime.txt and requirements/test.txt" >&2
