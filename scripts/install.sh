#!/usr/bin/env bash
# Installs preview-qa and everything it needs (Debian's Chromium included) — the one install path.
# The Dockerfile runs it, and so does .ci/run, so CI proves what the image does.
#
#   scripts/install.sh                              # into the current Python (the container image)
#   scripts/install.sh --venv .venv --extras test   # into a virtual environment, created if missing (CI)
#   scripts/install.sh --deps-only                  # everything but preview-qa itself (the image's cached layer)
#
# Python packages come from the lock (requirements/<extras or "runtime">.txt: exact versions with hashes, made by
# scripts/lock.sh), then preview-qa itself with --no-deps: nothing unpinned is ever installed.
set -euo pipefail

venv="" extras="" deps_only=""
while [ $# -gt 0 ]; do
  case "$1" in
    --venv) venv="$2"; shift 2 ;;
    --extras) extras="$2"; shift 2 ;;
    --deps-only) deps_only=1; shift ;;
    *) echo "install.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
root="$(cd "$(dirname "$0")/.." && pwd)"
lock="$root/requirements/${extras:-runtime}.txt"
if [ ! -f "$lock" ]; then
  echo "install.sh: no lock file for extras '${extras}' ($lock); the lock files are made by scripts/lock.sh" >&2
  exit 2
fi

# Debian packages, each checked on its own: a host that has Chromium may still lack a library or the fonts.
packages=(
  chromium                # the browser the agents drive (Debian's build, kept patched by Debian's security team)
  libatomic1              # Playwright's bundled Node.js needs it; slim images do not ship it
  fonts-liberation        # metric-compatible Arial/Helvetica/Times/Courier: pages lay out as users see them
  fonts-noto-color-emoji  # emoji as glyphs, not empty boxes, in screenshots the agent reads
  ca-certificates         # HTTPS to the preview and to the LLM provider
  tini                    # the image's PID 1: forwards a cancelled job's SIGTERM and reaps Chromium's orphans
)
if ! command -v dpkg-query >/dev/null 2>&1; then
  echo "install.sh: needs a Debian-based system (dpkg/apt) for: ${packages[*]}" >&2
  exit 2
fi
missing=()
for package in "${packages[@]}"; do
  [ "$(dpkg-query -W -f='${db:Status-Status}' "$package" 2>/dev/null)" = installed ] || missing+=("$package")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "install.sh: installing ${missing[*]}" >&2
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

python="${PYTHON:-python3}"
if [ -n "$venv" ]; then
  [ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
  python="$venv/bin/python"
fi
pip=("$python" -m pip install --quiet --disable-pip-version-check)
"${pip[@]}" --require-hashes -r "$lock"
[ -n "$deps_only" ] && exit 0
# The build backend is in the lock, so no isolated build environment fetches an unpinned one.
"${pip[@]}" --no-deps --no-build-isolation "$root"
broken="$("$python" -m pip check --disable-pip-version-check)" || { echo "$broken" >&2; exit 1; }
chromium --version
"$python" -m preview_qa --version
