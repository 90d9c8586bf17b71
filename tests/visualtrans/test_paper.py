"""The VisualTrans paper's Table 2 as `tvr vlm report` prints it (tvr.visualtrans.paper): all 17
rows, each the same as the independent transcription of tests/visualtrans/test_scoring.py, and
each row's dimension means those of its printed subtasks."""

from __future__ import annotations

import pytest

from tests.visualtrans.test_scoring import TABLE2 as TRANSCRIBED
from tvr.visualtrans import paper

#: the models whose Interm. the paper prints "-" (input format not supported)
NO_INTERM = {"Qwen2.5-VL-7B", "Phi-4-Multimodal-Instruct"}


def test_all_seventeen_rows_best_overall_first():
    assert len(paper.TABLE2) == 17
    overall = [row[-1] for row in paper.TABLE2.values()]
    assert overall == sorted(overall, reverse=True)
    assert all(len(row) == len(paper.COLUMNS) for row in paper.TABLE2.values())
    assert {m for m, row in paper.TABLE2.items() if None in row} == NO_INTERM


@pytest.mark.parametrize("model", sorted(TRANSCRIBED))
def test_rows_match_the_scoring_tests_transcription(model):
    assert paper.TABLE2[model] == tuple(float(x) for x in TRANSCRIBED[model].split())


@pytest.mark.parametrize("model", sorted(paper.TABLE2))
def test_dimension_means_are_those_of_the_printed_subtasks(model):
    row = paper.table2_row(model)
    assert row["Spatial"] == pytest.approx((row["Fine"] + row["Global"]) / 2, abs=0.006)
    procedural = [row[c] for c in ("Interm.", "Causal", "Plan") if row[c] is not None]
    assert row["Procedural"] == pytest.approx(sum(procedural) / len(procedural), abs=0.006)
    assert row["Quantitative"] == row["Count"]  # Quant.'s only subtask
    assert (row["Interm."] is None) == (model in NO_INTERM)
