#!/usr/bin/env bash
# The smoke set on every Python this machine has (3.10, 3.11, 3.12, 3.13; scripts/test.sh runs
# the full suite on 3.11 with every extra): a fresh venv with the base package only, then
# `tvr demo`, one evaluation per benchmark, every command that needs an extra (each must end in
# one line naming it: scripts/missing_extras.py) and the import contracts. A Python that is not
# installed is skipped, saying so.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export HF_HUB_OFFLINE=1
for version in 3.10 3.11 3.12 3.13; do
  python=""
  for candidate in "python$version" "$(pyenv root 2>/dev/null)/versions/$version"*/bin/python; do
    if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c "import sys; assert sys.version_info[:2] == tuple(map(int, '$version'.split('.')))" 2>/dev/null; then
      python=$candidate
      break
    fi
  done
  if [ -z "$python" ]; then
    echo "smoke $version: no Python $version on this machine, skipped"
    continue
  fi
  start=$(date +%s)
  env="$work/venv$version"
  "$python" -m venv "$env"
  "$env/bin/pip" install --quiet --disable-pip-version-check -e "$root" import-linter \
    > "$work/pip.txt" 2>&1 || { cat "$work/pip.txt"; exit 1; }
  (
    cd "$work"
    run() { "$env/bin/tvr" "$@" > "$work/out.txt" 2>&1 || { cat "$work/out.txt"; exit 1; }; }
    run demo --out "demo$version" --num 40 --workers 1
    run evaluate --data "demo$version/samples/samples.jsonl" --predictions "demo$version/predictions-random.jsonl"
    "$env/bin/python" "$root/scripts/smoke_inputs.py" "in$version"
    run tranco evaluate --data "in$version/tranco.jsonl" --predictions "in$version/tranco-pred.jsonl"
    run clevrer evaluate --data "in$version/questions.json" --predictions "in$version/answers.json"
    run visualtrans evaluate --data "in$version/visualtrans.json" --predictions "in$version/replies.jsonl" --out "vt$version"
    run vtt stats --data "in$version/vtt.jsonl"
    "$env/bin/python" "$root/scripts/missing_extras.py" "extras$version" > "$work/extras.txt" 2>&1 \
      || { cat "$work/extras.txt"; exit 1; }
    tail -n 1 "$work/extras.txt" > "$work/extras-summary.txt"
  )
  (cd "$root" && "$env/bin/lint-imports" --no-cache > "$work/lint.txt" 2>&1) || { cat "$work/lint.txt"; exit 1; }
  echo "smoke $version: $("$env/bin/python" --version) installed and ran demo, 5 evaluations, $(cat "$work/extras-summary.txt"), and the import contracts in $(( $(date +%s) - start )) s"
done
