#!/usr/bin/env bash
# The test command of README.md (and of .ci/run): install tvr with its test extras (the exact
# versions of constraints.txt), lint, check the import contracts, run the tests on this Python
# (3.11), then the smoke set on the other Pythons the machine has (scripts/smoke.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
export HF_HUB_OFFLINE=1
# the raster renderer draws through EGL: Mesa's software driver from Debian
if ! ldconfig -p | grep -q 'libEGL_mesa.so.0'; then
  (apt-get update -qq && apt-get install -y -qq libegl1 libgl1-mesa-dri libegl-mesa0) >/dev/null
fi
# the browser test of the web app drives Debian's chromium (never a downloaded browser)
if [ ! -x /usr/bin/chromium ]; then
  (apt-get update -qq && apt-get install -y -qq chromium) >/dev/null
fi
# VTT's METEOR and PTB tokenizer run on Java
if ! command -v java >/dev/null; then
  (apt-get update -qq && apt-get install -y -qq default-jre-headless) >/dev/null
fi
# loose pins for users (pyproject.toml), the exact tested set here (constraints.txt)
python3 -m pip install --quiet --disable-pip-version-check -c constraints.txt -e ".[test]"
python3 -m ruff check src tests benchmarks scripts
# the import rule of docs/architecture.md: core <- shared layers <- benchmarks <- cli, no cycles
lint-imports --no-cache
# Python 3.10 is the oldest supported: no newer syntax or standard library in the package (tomllib
# is imported only where tomli stands in for it on 3.10)
py310=$(vermin --quiet --no-tips --violations --eval-annotations --backport typing \
  --exclude tomllib -t=3.10- src/tvr) || { echo "$py310"; exit 1; }
python3 -m pytest -q
# the base package alone on every Python this machine has: demo, evaluations, the one-line
# message of every command that needs an extra (scripts/missing_extras.py), import contracts
bash scripts/smoke.sh
