"""The max-steps policies of TRANCE's evaluation (no numpy: `tvr evaluate --help` lists them)."""

from __future__ import annotations

#: What evaluation does with a prediction that has more steps than a reference can have
#: (Event and View: 4). Basic scores one step under every policy: a longer Basic line is a bad
#: line under "simulate" and "strict" and counts as wrong under "lenient".
MAX_STEPS_POLICIES = {
    "simulate": "apply every step, as the released evaluator does (the default)",
    "strict": "a bad line: stop there (with --lenient, count its sample as wrong)",
    "lenient": "a bad line that counts its sample as wrong and is counted; go on",
}
