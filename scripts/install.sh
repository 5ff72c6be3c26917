#!/usr/bin/env bash
# Installs preview-qa and everything it needs (Debian's Chromium included) — the one install path.
# The Dockerfile runs it, and so does .ci/run, so CI proves what the image does.
#
#   scripts/install.sh                    # into the current Python (the container image)
#   scripts/install.sh --venv .venv       # into a virtual environment, created if missing
#   scripts/install.sh --venv .venv --extras test
set -euo pipefail

venv="" extras=""
while [ $# -gt 0 ]; do
  case "$1" in
    --venv) venv="$2"; shift 2 ;;
    --extras) extras="$2"; shift 2 ;;
    *) echo "install.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
root="$(cd "$(dirname "$0")/.." && pwd)"

if ! command -v chromium >/dev/null 2>&1; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
    chromium fonts-liberation fonts-noto-color-emoji ca-certificates >/dev/null
fi

python="${PYTHON:-python3}"
if [ -n "$venv" ]; then
  [ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
  python="$venv/bin/python"
fi
"$python" -m pip install --quiet --disable-pip-version-check "${root}${extras:+[$extras]}"
chromium --version
"$python" -m preview_qa --version
