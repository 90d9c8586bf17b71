"""The question parser: words and vocabularies, the paper's selection, the seq2seq network (forward,
backward, overfitting 50 programs to exact match), a two-epoch run that resumes, its parses."""

from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("lightning")

from tvr.clevrer.data.questions import read_questions  # noqa: E402
from tvr.clevrer.models.parser.config import ParserConfig  # noqa: E402
from tvr.clevrer.models.parser.data import (  # noqa: E402
    ParserSample,
    parser_samples,
    role_counts,
    select_programs,
)
from tvr.clevrer.models.parser.model import Seq2Seq  # noqa: E402
from tvr.clevrer.models.parser.module import (  # noqa: E402
    EncodedSamples,
    ParserModule,
    RoleBatches,
    exact_matches,
    make_collate,
)
from tvr.clevrer.models.parser.tokens import END_ID, START_ID, Vocab, tokenize  # noqa: E402
from tvr.cli import main  # noqa: E402


def _samples(root, split="train"):
    return parser_samples(read_questions(root / "questions" / f"{split}.json"), with_programs=True)


def test_tokenize_keeps_the_possessive_and_drops_punctuation():
    assert tokenize("What is the green sphere's color?") == [
        "what",
        "is",
        "the",
        "green",
        "sphere",
        "'s",
        "color",
    ]
    assert tokenize("Without the gray object, which event will not happen?")[3:6] == [
        "object",
        "which",
        "event",
    ]


def test_vocab_numbers_by_count_and_decodes_up_to_the_end():
    vocab = Vocab.build([["b", "a", "b"], ["c", "b", "a"]])
    assert vocab.tokens[:4] == ("<NULL>", "<START>", "<END>", "<UNK>")
    assert vocab.tokens[4:] == ("b", "a", "c")
    ids = vocab.encode(["a", "zzz"], ends=True)
    assert ids == [START_ID, 5, 3, END_ID]
    assert vocab.decode([*ids, 4, 4]) == ("a", "<UNK>")
    assert Vocab.from_json(json.loads(json.dumps(vocab.to_json()))) == vocab


def test_samples_mark_the_question_type_and_keep_every_choice(symbolic_set):
    videos = read_questions(symbolic_set / "questions" / "train.json")
    samples = parser_samples(videos, with_programs=True)
    n_questions = sum(len(v.questions) for v in videos)
    n_choices = sum(len(q.choices or ()) for v in videos for q in v.questions)
    assert len(samples) == n_questions + n_choices
    counts = role_counts(samples)
    assert (
        counts["choice"] == n_choices and counts["descriptive"] + counts["question"] == n_questions
    )
    for s in samples:
        assert s.words[0] in ("<descriptive>", "<explanatory>", "<predictive>", "<counterfactual>")
        assert (s.role == "descriptive") == (s.words[0] == "<descriptive>")


def test_select_programs_takes_n_questions_and_4n_choices_reproducibly(symbolic_set):
    samples = _samples(symbolic_set)
    chosen = select_programs(samples, 3, seed=5)
    assert role_counts(chosen) == {"descriptive": 3, "question": 3, "choice": 12}
    assert chosen == select_programs(samples, 3, seed=5)
    assert chosen != select_programs(samples, 3, seed=6)
    assert select_programs(samples, None, seed=5) == samples
    assert len(select_programs(samples, 10_000, seed=5)) == len(samples)


def test_seq2seq_runs_forward_and_backward_on_a_tiny_batch():
    torch.manual_seed(0)
    net = Seq2Seq(n_words=20, n_tokens=15, embed_dim=8, hidden=12, layers=2, dropout=0.1)
    words = torch.tensor([[5, 6, 7, 8], [9, 10, 0, 0]])
    lengths = torch.tensor([4, 2])
    program = torch.tensor([[START_ID, 4, 5, 6, END_ID], [START_ID, 7, END_ID, 0, 0]])
    logits = net(words, lengths, program[:, :-1])
    assert logits.shape == (2, 4, 15)
    loss = torch.nn.functional.cross_entropy(logits.transpose(1, 2), program[:, 1:], ignore_index=0)
    loss.backward()
    for name, p in net.named_parameters():
        if name.startswith("token_embedding") or name.startswith("word_embedding"):
            continue
        assert p.grad is not None and torch.isfinite(p.grad).all(), name
    assert net.encoder.weight_ih_l0.grad.abs().sum() > 0
    net.eval()
    parsed = net.greedy(words, lengths, max_length=6)
    assert parsed.shape[0] == 2 and parsed.shape[1] <= 6


def test_the_parser_overfits_50_programs_to_exact_match(symbolic_set):
    torch.manual_seed(0)
    every = _samples(symbolic_set)
    keep = np.random.default_rng(0).choice(len(every), 50, replace=False)
    samples: list[ParserSample] = [every[i] for i in sorted(keep.tolist())]
    words = Vocab.build(s.words for s in samples)
    tokens = Vocab.build(s.program for s in samples)
    config = ParserConfig(data="-", embed_dim=32, hidden=64, layers=1, lr=1e-2)
    module = ParserModule(config.to_dict(), words.to_json(), tokens.to_json())
    optimizer = module.configure_optimizers()
    batches = list(
        torch.utils.data.DataLoader(
            EncodedSamples(samples, words, tokens),
            batch_sampler=RoleBatches([s.role for s in samples], 64, False, 0),
            collate_fn=make_collate(samples),
        )
    )
    right = 0
    for epoch in range(150):
        module.train()
        for batch in batches:
            optimizer.zero_grad()
            module._loss(batch).backward()
            optimizer.step()
        if epoch % 10 == 9:
            module.eval()
            right = sum(
                int(
                    exact_matches(
                        module.networks[b["role"]].greedy(b["words"], b["lengths"], 40),
                        b["program"],
                    ).sum()
                )
                for b in batches
            )
            if right == 50:
                break
    assert right == 50


def _config(root, tmp_path, **kw):
    values = dict(
        data=str(root),
        programs=None,
        epochs=2,
        embed_dim=16,
        hidden=24,
        layers=1,
        batch_size=32,
        accelerator="cpu",
        output_dir=str(tmp_path / "runs"),
        run_name="parser",
    )
    values.update(kw)
    return ParserConfig(**values)


def test_a_two_epoch_run_saves_everything_parses_and_resumes(symbolic_set, tmp_path, capsys):
    from tvr.clevrer.models.parser.run import train_parser

    run = train_parser(_config(symbolic_set, tmp_path))
    out = capsys.readouterr().out
    assert "epoch 1/2:" in out and "val exact match" in out
    assert json.loads((run / "config.json").read_text())["programs"] is None
    rows = (run / "metrics.csv").read_text().splitlines()
    assert len(rows) == 3 and "val/acc" in rows[0] and "val/acc_choice" in rows[0]
    assert (run / "checkpoints" / "best.ckpt").is_file() and (
        run / "checkpoints" / "last.ckpt"
    ).is_file()
    parsed = read_questions(run / "predictions" / "validation.json")
    gold = read_questions(symbolic_set / "questions" / "validation.json")
    assert [v.scene_index for v in parsed] == [v.scene_index for v in gold]
    assert [q.answer for q in parsed[0].questions] == [q.answer for q in gold[0].questions]
    scores = json.loads((run / "eval" / "validation" / "exact_match.json").read_text())
    n_texts = len(_samples(symbolic_set, "validation"))
    assert scores["all"]["total"] == n_texts
    assert scores["questions"]["total"] == sum(len(v.questions) for v in gold)
    # a rerun with more epochs resumes from last.ckpt: one more row, the two first kept
    train_parser(_config(symbolic_set, tmp_path, epochs=3))
    again = (run / "metrics.csv").read_text().splitlines()
    assert len(again) == 4 and again[1:3] == rows[1:3]
    # another config may not write into that folder
    with pytest.raises(Exception, match="holds another run"):
        train_parser(_config(symbolic_set, tmp_path, hidden=32))


def test_cli_train_parser_refuses_a_bad_option_in_one_line(tmp_path, capsys):
    code = main(
        [
            "clevrer",
            "train",
            "parser",
            "--data",
            str(tmp_path / "none"),
            "--output-dir",
            str(tmp_path / "runs"),
        ]
    )
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "tvr clevrer train parser: error:" in err[0] and "question file" in err[0]
    with pytest.raises(SystemExit):
        main(["clevrer", "train", "parser", "--data", "x", "--parser-programs", "none"])
