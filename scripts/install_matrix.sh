#!/usr/bin/env bash
# Install logs for the Pythons this machine has (issue 29): per Python a fresh venv, the base
# package, then each extra on its own (the loose ranges of pyproject.toml, as a user installs
# them: no constraints file), then `tvr demo` and one evaluation per benchmark. Writes one log
# per step and a summary table to OUT (default install-matrix/). Minutes per Python (torch).
#
# Usage: bash scripts/install_matrix.sh [OUT] [PYTHON_VERSIONS...]
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
out=$(realpath -m "${1:-install-matrix}")
shift || true
versions=("${@:-3.10 3.11 3.12 3.13}")
read -r -a versions <<< "${versions[*]}"
extras=$(python3 -c "import tomllib; print(' '.join(tomllib.load(open('pyproject.toml','rb'))['project']['optional-dependencies']))")
mkdir -p "$out"
summary="$out/summary.md"
echo "| Python | step | result | seconds |" > "$summary"
echo "|---|---|---|---:|" >> "$summary"
export HF_HUB_OFFLINE=1
for version in "${versions[@]}"; do
  python=""
  for candidate in "python$version" "$(pyenv root 2>/dev/null)/versions/$version"*/bin/python; do
    if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c "import sys; assert sys.version_info[:2] == tuple(map(int, '$version'.split('.')))" 2>/dev/null; then
      python=$candidate
      break
    fi
  done
  [ -z "$python" ] && { echo "| $version | - | no Python $version here | |" >> "$summary"; continue; }
  env="$out/venv$version"
  rm -rf "$env"
  "$python" -m venv "$env"
  step() {  # step NAME COMMAND...: run, log, add a row
    local name=$1; shift
    local start=$(date +%s)
    if "$@" > "$out/$version-$name.log" 2>&1; then result=ok; else result="FAILED (see $version-$name.log)"; fi
    echo "| $("$python" --version | cut -d' ' -f2) | $name | $result | $(( $(date +%s) - start )) |" >> "$summary"
    echo "$version $name: $result"
  }
  step base "$env/bin/pip" install --disable-pip-version-check -e "$root"
  for extra in $extras; do
    step "extra-$extra" "$env/bin/pip" install --disable-pip-version-check -e "$root[$extra]"
  done
  work="$out/work$version"
  rm -rf "$work" && mkdir -p "$work"
  step demo bash -c "cd '$work' && '$env/bin/tvr' demo --out demo --num 40 --workers 1"
  step inputs "$env/bin/python" "$root/scripts/smoke_inputs.py" "$work/in"
  step trance-evaluate bash -c "cd '$work' && '$env/bin/tvr' evaluate --data demo --predictions demo/predictions-random.jsonl"
  step tranco-evaluate bash -c "cd '$work' && '$env/bin/tvr' tranco evaluate --data in/tranco.jsonl --predictions in/tranco-pred.jsonl"
  step clevrer-evaluate bash -c "cd '$work' && '$env/bin/tvr' clevrer evaluate --data in/questions.json --predictions in/answers.json"
  step visualtrans-evaluate bash -c "cd '$work' && '$env/bin/tvr' visualtrans evaluate --data in/visualtrans.json --predictions in/replies.jsonl"
  step vtt-stats bash -c "cd '$work' && '$env/bin/tvr' vtt stats --data in/vtt.jsonl"
  step vtt-evaluate bash -c "cd '$work' && '$env/bin/tvr' vtt evaluate --data in/vtt.jsonl --predictions in/vtt-pred.jsonl --no-bertscore"
  rm -rf "$env"  # the logs stay; the venv is large
done
cat "$summary"
