"""The released VTT prediction files as `tvr vtt evaluate` reads them: the human results' `preds`
key, `--only-present` (Table 2's Human and multi-turn rows score only the samples in their file),
progress on stderr and `--quiet`; and the random-weights warning of `tvr vtt baseline`."""

import json

import pytest

from tests.vtt.samples import needs_java, sample_id, small_records, write_lines
from tvr.cli import main
from tvr.core.errors import InputError
from tvr.core.notices import random_weights_line, warn_random_weights
from tvr.vtt.data.predictions import read_predictions
from tvr.vtt.eval.evaluate import evaluate
from tvr.vtt.eval.metrics.suite import MetricOptions

NO_BERT = MetricOptions(bertscore=False)


def test_preds_is_read_like_transformations(tmp_path):
    path = write_lines(tmp_path / "human.jsonl", [
        # a line of the released human.jsonl: the raters' fields ride along and are ignored
        {"id": sample_id(0), "preds": ["put steak on grill", "flip steak"], "order": 41,
         "fluency": 5, "relevance": 5, "logical_soundness": 5, "normal": True},
        {"id": sample_id(1), "transformations": ["add cream"], "preds": ["not this one"]},
    ])  # fmt: skip
    found = read_predictions(path)
    assert found[sample_id(0)].transformations == ("put steak on grill", "flip steak")
    assert found[sample_id(1)].transformations == ("add cream",)  # transformations wins


@pytest.mark.parametrize(
    ("line", "field", "words"),
    [
        ({"id": "a", "order": 3}, "transformations", '"transformations" or "preds"'),
        ({"id": "a", "response": {"overall": "x", "preds": ["a"]}}, "transformations",
         "response.preds"),
        ({"id": "a", "preds": "flip"}, "preds", "list of descriptions"),
        ({"id": "a", "preds": ["flip", 3]}, "preds[1]", "a string"),
    ],
)
def test_a_line_without_descriptions_is_named(tmp_path, line, field, words):
    path = write_lines(tmp_path / "p.jsonl", [line])
    with pytest.raises(InputError) as err:
        read_predictions(path)
    assert (err.value.line, err.value.field) == (1, field)
    assert words in err.value.reason


def _cut(tmp_path, ids):
    """The records file cut to the test samples `ids` (and the training sample, not scored)."""
    kept = [r for r in small_records() if r["id"] in ids or r["split"] != "test"]
    return write_lines(tmp_path / "cut.jsonl", kept)


@needs_java
def test_only_present_equals_scoring_a_cut_reference(tmp_path):
    records = write_lines(tmp_path / "vtt.jsonl", small_records())
    present = [sample_id(0), sample_id(2)]  # sample 1 (2 descriptions) has no line
    preds = write_lines(tmp_path / "human.jsonl", [
        {"id": sample_id(0), "preds": ["put steak on the grill", "flip it", "take steak off"]},
        {"id": sample_id(2), "preds": ["slice the mango"]},
    ])  # fmt: skip
    only = evaluate(records, preds, options=NO_BERT, only_present=True)
    cut = evaluate(_cut(tmp_path, present), preds, options=NO_BERT)
    # the same numbers: CIDEr-D's document frequencies too come from the present samples only
    for name in ("BLEU_4", "METEOR", "ROUGE_L", "CIDEr"):
        assert only.summary["metrics"][name] == pytest.approx(cut.summary["metrics"][name])
    assert [(d["id"], d["CIDEr"]) for d in only.detail] == [(d["id"], d["CIDEr"]) for d in cut.detail]
    s = only.summary
    assert (s["samples"], s["split_samples"], s["descriptions"], s["only_present"]) == (2, 3, 4, True)
    assert s["missing"] == {"samples": 0, "descriptions": 0}
    assert "2 of 3 samples (only those present in the predictions, --only-present)" in only.table[0]
    # without it the absent sample is scored as two empty descriptions: lower means
    full = evaluate(records, preds, options=NO_BERT)
    assert (full.summary["samples"], full.summary["descriptions"]) == (3, 6)
    assert full.summary["missing"] == {"samples": 1, "descriptions": 2}
    assert full.summary["metrics"]["ROUGE_L"] < s["metrics"]["ROUGE_L"]


@needs_java
def test_the_command_says_what_was_scored(tmp_path, capsys):
    records = write_lines(tmp_path / "vtt.jsonl", small_records())
    preds = write_lines(tmp_path / "human.jsonl", [{"id": sample_id(2), "preds": ["cut mango"]}])
    base = ["vtt", "evaluate", "--data", str(records), "--predictions", str(preds),
            "--no-bertscore"]  # fmt: skip
    # without --only-present: scored as today, and the table says how to score only the file's
    assert main(base) == 0
    captured = capsys.readouterr()
    assert "test: 3 samples, 6 descriptions" in captured.out
    assert ("2 of 3 test samples have no prediction and were scored as empty descriptions; "
            "--only-present scores only the samples in the file") in captured.out  # fmt: skip
    for step in ("tokenising (PTB)", "BLEU-4", "ROUGE-L", "CIDEr-D", "METEOR"):
        assert step in captured.err  # a progress bar per step, on stderr only
    assert "%|" not in captured.out
    # with it: the count of scored samples, and no hint; --quiet: no bars
    assert main([*base, "--only-present", "--quiet", "--json"]) == 0
    captured = capsys.readouterr()
    summary = json.loads(captured.out)
    assert (summary["samples"], summary["split_samples"], summary["descriptions"]) == (1, 3, 1)
    assert summary["metrics"]["ROUGE_L"] == pytest.approx(100)
    assert "METEOR" not in captured.err and "BLEU-4" not in captured.err
    assert main([*base, "--only-present", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "test: 1 of 3 samples (only those present in the predictions, --only-present)" in out
    assert "have no prediction" not in out


def test_the_random_weights_warning_names_the_option(capsys):
    line = warn_random_weights("the image encoder ViT-L-14", "--encoder-weights", seed=0)
    err = capsys.readouterr().err
    assert err == line + "\n" and "\n" not in line
    assert line.startswith("tvr: warning: the image encoder ViT-L-14 runs with random weights")
    assert "--encoder-weights" in line and "seeded 0" in line
    assert "seeded" not in random_weights_line("the CNN", "--cnn-weights")


def test_the_baseline_warns_once_about_random_weights(tmp_path, capsys):
    pytest.importorskip("open_clip")
    from tests.vtt.image_sets import write_image_set

    data = write_image_set(tmp_path / "data", {"train": 3, "test": 2}, image_size=32)
    out = tmp_path / "nn.jsonl"
    args = ["vtt", "baseline", "nearest", "--data", str(data), "--encoder", "tvr-tiny",
            "--feature-cache", str(tmp_path / "cache"), "--out", str(out)]  # fmt: skip
    assert main(args) == 0
    err = capsys.readouterr().err
    warnings = [x for x in err.splitlines() if "random weights" in x]
    assert len(warnings) == 1 and "--encoder-weights" in warnings[0]
    assert "encoding with tvr-tiny" in err and "nearest test pairs" in err  # progress
    out.unlink()
    assert main([*args, "--quiet"]) == 0  # the warning stays; the bars go
    err = capsys.readouterr().err
    assert sum("random weights" in x for x in err.splitlines()) == 1
    assert "nearest test pairs" not in err
