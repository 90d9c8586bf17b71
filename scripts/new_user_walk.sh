#!/usr/bin/env bash
# The new-user walk (issue 42): a fresh clone of this checkout's HEAD, a fresh venv of PYTHON with
# the base package only (README's first command), then every cell of docs/cli.md's command table
# once on tiny inputs. A command that needs an extra must end in one line naming it (rc 2); every
# other one must succeed. Writes OUT/walk.md: per command its rc, wall seconds and last line.
#
# Usage: bash scripts/new_user_walk.sh PYTHON OUT     e.g. python3.12 /tmp/walk312
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
python=${1:?usage: new_user_walk.sh PYTHON OUT}
out=$(realpath -m "${2:?usage: new_user_walk.sh PYTHON OUT}")
rm -rf "$out" && mkdir -p "$out"
export HF_HUB_OFFLINE=1
git clone -q "$root" "$out/clone"
start=$(date +%s)
"$python" -m venv "$out/venv"
"$out/venv/bin/pip" install --quiet --disable-pip-version-check -e "$out/clone" > "$out/pip.log" 2>&1 \
  || { cat "$out/pip.log"; exit 1; }
echo "installed the base package with $("$out/venv/bin/python" --version) in $(( $(date +%s) - start )) s"
work="$out/work" && mkdir -p "$work" && cd "$work" || exit 1
tvr="$out/venv/bin/tvr"
report="$out/walk.md"
{
  echo "| command | rc | s | last line |"
  echo "|---|---:|---:|---|"
} > "$report"
fails=0
step() {  # step EXPECT ARGS...: EXPECT ok (rc 0) or extra (rc 2, one line naming an extra)
  local expect=$1; shift
  local t0 rc last
  t0=$(date +%s.%N)
  "$tvr" "$@" > step.out 2>&1; rc=$?
  last=$(grep -v '^\s*$' step.out | tail -n 1 | cut -c1-150 | tr '|' '/')
  local secs; secs=$(python3 -c "print(f'{$(date +%s.%N) - $t0:.1f}')")
  echo "| \`tvr $*\` | $rc | $secs | $last |" >> "$report"
  if [ "$expect" = ok ] && [ "$rc" != 0 ]; then fails=$((fails + 1)); echo "FAILED (rc $rc): tvr $*"; cat step.out; fi
  if [ "$expect" = extra ] && { [ "$rc" != 2 ] || ! grep -q "pip install 'tvr\[" step.out; }; then
    fails=$((fails + 1)); echo "NO EXTRA LINE (rc $rc): tvr $*"; cat step.out
  fi
}
"$out/venv/bin/python" "$root/scripts/smoke_inputs.py" in > /dev/null
step ok demo --out demo --num 40 --workers 1
S=demo/samples/samples.jsonl
# TRANCE
step ok stats --data $S
step ok baseline random --data $S --out trance-random.jsonl
step ok evaluate --data $S --predictions trance-random.jsonl --out ev-random
step ok evaluate --data $S --predictions demo/predictions-oracle.jsonl --out ev-oracle
step ok compare random=ev-random oracle=ev-oracle --out cmp-trance
step ok solve --data $S --perception gt --out solve.jsonl
step extra generate --setting event --split-sizes train=2,val=2,test=2 --out gen --quiet
step extra train --source synthetic --model cnn+-g --epochs 1 --output-dir runs --run-name t
step extra predict --checkpoint runs/t/best.ckpt --data demo/samples --out p.jsonl
step extra trance parser train --data gen
step extra report --data demo/samples --out report
# CLEVRER
step ok clevrer stats --data in/questions.json
step ok clevrer evaluate --data in/questions.json --predictions in/answers.json --out cev-a
step ok clevrer baseline random --data in/questions.json --out clevrer-random.json
step ok clevrer evaluate --data in/questions.json --predictions clevrer-random.json --out cev-r
step ok clevrer compare a=cev-a r=cev-r --out cmp-clevrer
step extra clevrer generate --num 2 --split-sizes train=1,val=0,test=1 --out cgen --quiet
step extra clevrer train parser --data cgen
step extra clevrer report --data in/questions.json --out creport
# VTT
step ok vtt stats --data in/vtt.jsonl
step extra vtt evaluate --data in/vtt.jsonl --predictions in/vtt-pred.jsonl --out vev
# the random baseline draws from the train split: the records again, as train, beside them
"$out/venv/bin/python" - <<'PY'
import json
rows = [json.loads(line) for line in open("in/vtt.jsonl", encoding="utf-8")]
train = []
for r in rows:
    t = json.loads(json.dumps(r))
    t["id"], t["split"] = format(int(r["id"], 16) ^ 1, "016x"), "train"
    for step in t["annotation"]:
        step["clip_id"] = t["id"] + step["clip_id"][16:]
    if t.get("frames"):
        t["frames"] = {t["id"] + k[16:]: v for k, v in t["frames"].items()}
    train.append(t)
with open("in/vtt-both.jsonl", "w", encoding="utf-8") as f:
    f.writelines(json.dumps(r) + "\n" for r in rows + train)
PY
step ok vtt baseline random --data in/vtt-both.jsonl --out vtt-random.jsonl
step extra vtt train --data .
step extra vtt testbed --out vtb --num 2 --quiet
# TRANCO
step ok tranco stats --data in/tranco.jsonl
step ok tranco evaluate --data in/tranco.jsonl --predictions in/tranco-pred.jsonl --out tev-p
step ok tranco baseline random --data in/tranco.jsonl --out tranco-random.jsonl
step ok tranco evaluate --data in/tranco.jsonl --predictions tranco-random.jsonl --out tev-r
step ok tranco compare p=tev-p r=tev-r --out cmp-tranco
step extra tranco train --data .
step extra tranco testbed --out ttb --num 2 --quiet
# VisualTrans
step ok visualtrans stats --data in/visualtrans.json
step ok visualtrans evaluate --data in/visualtrans.json --predictions in/replies.jsonl --out vtev-p
step ok visualtrans baseline random --data in/visualtrans.json --out vt-random.jsonl
step ok visualtrans evaluate --data in/visualtrans.json --predictions vt-random.jsonl --out vtev-r
step ok visualtrans compare p=vtev-p r=vtev-r --out cmp-vt
step extra visualtrans testbed --out vttb
echo "$(grep -c '^| `tvr' "$report") commands, $fails not as expected; table in $report"
[ "$fails" = 0 ]
