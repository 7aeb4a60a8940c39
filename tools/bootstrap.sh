#!/usr/bin/env bash
# Bring this checkout to a state where `make book` / `make test` can run.
#
#   tools/bootstrap.sh            system tools for the book (dot, java) + the .venv
#   tools/bootstrap.sh --browser  ... plus chromium, for the rendered-book browser test
#
# Idempotent and fast when already done:
#   * apt is only touched when a binary is missing (apt-get update runs once, first);
#   * the venv is only (re)installed when the hash of requirements.txt + pyproject.toml
#     (+ the interpreter version) differs from the stamp in .venv/.pymq-bootstrap.stamp.
# Works as root (fresh Debian 12) or as a user with sudo; otherwise it tells you what
# to install and stops.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
VENV="${VENV:-$ROOT/.venv}"
STAMP="$VENV/.pymq-bootstrap.stamp"
WANT_BROWSER=0
for arg in "$@"; do
  case "$arg" in
    --browser) WANT_BROWSER=1 ;;
    *) echo "usage: $0 [--browser]" >&2; exit 2 ;;
  esac
done

say() { printf '\033[1m[bootstrap]\033[0m %s\n' "$*"; }

# ---------------------------------------------------------------- system packages
APT_UPDATED=0
apt_install() {
  local pkgs=("$@") SUDO=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
      say "missing system packages: ${pkgs[*]} — install them (as root: apt-get install ${pkgs[*]}) and re-run"
      exit 1
    fi
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    say "missing system packages: ${pkgs[*]} — no apt-get here; install them with your package manager"
    exit 1
  fi
  if [ "$APT_UPDATED" -eq 0 ]; then
    say "apt-get update"
    $SUDO apt-get update -qq
    APT_UPDATED=1
  fi
  say "apt-get install ${pkgs[*]}"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
}

missing=()
command -v dot  >/dev/null 2>&1 || missing+=(graphviz)
command -v java >/dev/null 2>&1 || missing+=(default-jre-headless)
if [ "$WANT_BROWSER" -eq 1 ]; then
  command -v chromium >/dev/null 2>&1 || missing+=(chromium fonts-dejavu-core)
fi
if [ "${#missing[@]}" -gt 0 ]; then
  apt_install "${missing[@]}"
fi

# ---------------------------------------------------------------- python venv
PYTHON="${PYTHON:-python3}"
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  say "need Python >= 3.11 as '$PYTHON' (found: $("$PYTHON" --version 2>&1 || echo none))"
  exit 1
fi

if [ ! -x "$VENV/bin/python" ]; then
  say "creating venv at $VENV"
  if ! "$PYTHON" -m venv "$VENV" 2>/dev/null; then
    rm -rf "$VENV"
    say "venv creation failed; installing python3-venv"
    apt_install python3-venv
    "$PYTHON" -m venv "$VENV"
  fi
fi

want_hash=$(cat requirements.txt pyproject.toml | sha256sum | cut -c1-16)-$("$VENV/bin/python" -c 'import sys; print("%d.%d.%d" % sys.version_info[:3])')
have_hash=$(cat "$STAMP" 2>/dev/null || true)
if [ "$want_hash" != "$have_hash" ]; then
  say "installing Python dependencies into $VENV (requirements.txt, then pymq_ref in editable mode)"
  t0=$(date +%s)
  "$VENV/bin/python" -m pip install -q --upgrade pip
  "$VENV/bin/python" -m pip install -q -r requirements.txt
  # rocketmq==0.4.4 (the C++ 4.x client) and rocketmq-python-client (the 5.x gRPC client) both
  # ship rocketmq/__init__.py; the 5.x one must be the one on disk (its __init__ imports rocketmq.v5,
  # and rocketmq.client of the C++ client works under it; the reverse breaks the 5.x client)
  if grep -q '^rocketmq-python-client==' requirements.txt &&
     ! "$VENV/bin/python" -c 'from rocketmq import SimpleConsumer' 2>/dev/null; then
    "$VENV/bin/python" -m pip install -q --no-deps --force-reinstall \
      "$(grep '^rocketmq-python-client==' requirements.txt | cut -d' ' -f1)"
  fi
  "$VENV/bin/python" -m pip install -q --no-deps -e .
  echo "$want_hash" > "$STAMP"
  say "Python dependencies installed in $(( $(date +%s) - t0 )) s"
else
  say "venv up to date ($VENV)"
fi
