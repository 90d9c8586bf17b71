#!/usr/bin/env bash
# The test command of README.md (and of .ci/run): install tvr with its test extras, lint, run the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
export HF_HUB_OFFLINE=1
python3 -m pip install --quiet --disable-pip-version-check -e ".[test]"
python3 -m ruff check src tests benchmarks
python3 -m pytest -q
