"""The VTT models: tokenizer, encoder and its weights, the feature cache, TTNet's parts (Diff,
MTM, Aux), forward and backward, overfitting a few samples, and the decoders."""

from dataclasses import replace

import pytest
import torch

from tvr.core.errors import UserError
from tvr.vtt.models import build_model, tokenizer
from tvr.vtt.models.config import AUX_WEIGHTS, ModelConfig
from tvr.vtt.models.decoding import DecodeOptions
from tvr.vtt.models.encoder import ClipImageEncoder, EncoderSpec
from tvr.vtt.models.features import FeatureCache, cache_key
from tvr.vtt.models.layers import RelativePositionBias, TransformerStack
from tvr.vtt.models.ttnet import differences, mtm_mask
from tvr.vtt.train.data import collate
from tvr.vtt.train.losses import model_loss

torch.set_num_threads(1)

LABELS = [
    ["cut mango", "peel the orange"],
    ["pour milk", "add whipped cream", "flip steak"],
    ["stir the soup"],
    ["remove seeds", "cut mango"],
]
TINY = {"encoder": "tvr-tiny", "dim": 64, "heads": 4}
OFF = {"diff": False, "mtm": False, "aux": False}
MODELS = {
    "ttnet": ModelConfig(model="ttnet", **TINY),
    "ttnet-base": ModelConfig(model="ttnet-base", **TINY, **OFF),
    "glacnet": ModelConfig(model="glacnet", **TINY, **OFF),
    "glacnet-no-cascade": ModelConfig(model="glacnet", **TINY, **OFF, cascade=False),
    "ttnet-train-vocab": ModelConfig(model="ttnet", **TINY, vocab="train"),
    "glacnet-train-vocab": ModelConfig(model="glacnet", **TINY, **OFF, vocab="train"),
}
#: the CLIP ids of LABELS (the "train" vocabulary of the models that use one)
VOCAB_IDS = sorted({i for labs in LABELS for x in labs for i in tokenizer.encode(x, 24)})


def build(config, encoder_dim=64):
    return build_model(config, encoder_dim, 2, 2, VOCAB_IDS)


def make_batch(labels=LABELS, dim=64, seed=0):
    g = torch.Generator().manual_seed(seed)
    items = [
        {"id": str(i), "inputs": torch.randn(len(labs) + 1, dim, generator=g),
         "tokens": [tokenizer.encode(x, 24) for x in labs], "topic": i % 2, "category": i % 2,
         "references": labs}
        for i, labs in enumerate(labels)
    ]  # fmt: skip
    return collate(items)


def texts(model, batch, options=None):
    model.eval()
    with torch.no_grad():
        out = model.generate(batch, options or DecodeOptions())
    return [[tokenizer.decode(x) for x in sample] for sample in out]


# --- tokenizer, encoder, cache ------------------------------------------------------------------
def test_tokenizer_round_trip_and_length_limit():
    ids = tokenizer.encode("Put steak on grill", 24)
    assert ids[0] == tokenizer.SOT and ids[-1] == tokenizer.EOT
    assert tokenizer.decode(ids) == "put steak on grill"
    cut = tokenizer.encode("one two three four five six seven", 5)
    assert len(cut) == 5 and cut[-1] == tokenizer.EOT
    assert tokenizer.decode(cut) == "one two three"


def test_encoder_weights_from_a_local_file(tmp_path):
    spec = EncoderSpec("tvr-tiny", seed=3)
    encoder = ClipImageEncoder(spec)
    images = torch.randn(2, 3, encoder.image_size, encoder.image_size)
    # the whole CLIP model's weights, as open_clip saves them
    import open_clip

    from tvr.vtt.models.encoder import TINY_ARCHITECTURES

    torch.manual_seed(3)
    kwargs = {k: v for k, v in TINY_ARCHITECTURES["tvr-tiny"].items() if k != "base"}
    model = open_clip.create_model("ViT-B-32", pretrained=None, **kwargs)
    model.visual.load_state_dict(encoder.visual.state_dict())
    torch.save(model.state_dict(), tmp_path / "clip.pt")
    loaded = ClipImageEncoder(EncoderSpec("tvr-tiny", str(tmp_path / "clip.pt"), seed=99))
    with torch.no_grad():
        assert torch.equal(loaded(images), encoder(images))
        assert not torch.equal(ClipImageEncoder(EncoderSpec("tvr-tiny", seed=4))(images),
                               encoder(images))  # fmt: skip
    assert loaded.spec.identity()["weights"]["sha256"]
    with pytest.raises(UserError, match="no such file"):
        ClipImageEncoder(EncoderSpec("tvr-tiny", str(tmp_path / "missing.pt")))
    (tmp_path / "bad.pt").write_bytes(b"not weights")
    with pytest.raises(UserError, match="not a CLIP checkpoint"):
        ClipImageEncoder(EncoderSpec("tvr-tiny", str(tmp_path / "bad.pt")))
    with pytest.raises(UserError, match="unknown image encoder"):
        ClipImageEncoder(EncoderSpec("ViT-Q-99"))


def _write_jpegs(folder, count, seed):
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(count):
        path = folder / f"s{i}.jpg"
        Image.fromarray(rng.integers(0, 256, (40, 40, 3), dtype=np.uint8)).save(path)
        paths.append(path)
    return paths


def test_feature_cache_encodes_once_and_never_reads_stale_features(tmp_path):
    paths = _write_jpegs(tmp_path / "states", 3, seed=0)
    spec = EncoderSpec("tvr-tiny", seed=0)
    first = FeatureCache(spec, tmp_path / "cache")
    feats = first.get(paths)
    assert first.encoded == 3 and feats.shape == (3, 64)
    # the same features as the encoder run directly
    encoder = ClipImageEncoder(spec).eval()
    from tvr.vtt.models.features import load_image

    with torch.no_grad():
        direct = encoder(torch.stack([load_image(p, encoder.transform()) for p in paths]))
    assert torch.allclose(feats, direct, atol=1e-5)
    again = FeatureCache(spec, tmp_path / "cache")
    assert torch.equal(again.get(paths), feats) and again.encoded == 0
    # a changed image is encoded again; the others are read
    _write_jpegs(tmp_path / "other", 1, seed=7)[0].replace(paths[1])
    changed = FeatureCache(spec, tmp_path / "cache")
    new = changed.get(paths)
    assert changed.encoded == 1
    assert torch.equal(new[[0, 2]], feats[[0, 2]]) and not torch.equal(new[1], feats[1])
    # other weights: another cache file, encoded again
    other = FeatureCache(EncoderSpec("tvr-tiny", seed=1), tmp_path / "cache")
    assert other.path != first.path and not torch.equal(other.get(paths), new)
    assert other.encoded == 3
    assert cache_key(spec.identity()) != cache_key(EncoderSpec("tvr-tiny", seed=1).identity())
    with pytest.raises(UserError, match="no such state image"):
        first.get([tmp_path / "states" / "missing.jpg"])


# --- TTNet's parts --------------------------------------------------------------------------
def test_differences_wrap_around_per_sample():
    states = torch.arange(1.0, 9.0).view(2, 4, 1)  # sample 0: 4 states; sample 1: 3 real
    mask = torch.tensor([[True] * 4, [True, True, True, False]])
    d = differences(states * mask[..., None], mask)
    assert d[0, :, 0].tolist() == [1 - 4, 1, 1, 1]  # d_0 = v_0 - v_N
    assert d[1, :, 0].tolist() == [5 - 7, 1, 1, 0]


def test_mtm_masks_only_real_tokens_of_chosen_samples():
    tokens = torch.ones(3, 5, 4)
    mask = torch.tensor([[True] * 5, [True] * 3 + [False] * 2, [True] * 5])
    assert torch.equal(mtm_mask(tokens, mask, 0.15, 0.0), tokens)
    assert torch.equal(mtm_mask(tokens, mask, 1.0, 1.0), tokens * ~mask[..., None])
    torch.manual_seed(0)
    many = mtm_mask(torch.ones(2000, 4, 1), torch.ones(2000, 4, dtype=torch.bool), 0.15, 0.5)
    assert abs((many == 0).float().mean().item() - 0.075) < 0.01


def test_aux_weights_paper_and_released():
    assert AUX_WEIGHTS["paper"] == (1.0, 0.025, 0.1)
    text, category, topic = AUX_WEIGHTS["released"]
    # (L_text + 0.25 (0.1 L_cat + L_topic) / 1.1) / 1.25
    assert text == pytest.approx(0.8) and category == pytest.approx(0.025 / 1.375)
    assert topic == pytest.approx(0.25 / 1.375)
    assert ModelConfig(model="ttnet", aux=False).loss_weights == (1.0, 0.0, 0.0)
    with pytest.raises(ValueError, match="no Diff, MTM or Aux"):
        ModelConfig(model="glacnet")


def test_relative_position_bias_and_causality():
    rel = RelativePositionBias(heads=2, causal=False)
    b = rel.bucket(torch.tensor([0, 1, -1, 7, -7, 100, -100]))
    assert b[0] == 0 and len(set(b.tolist())) == 7
    stack = TransformerStack(16, 2, 2, 0.0, causal=True).eval()
    x = torch.randn(1, 6, 16)
    y = x.clone()
    y[0, 4:] = torch.randn(2, 16)
    pos = torch.arange(6)
    assert torch.allclose(stack(x, pos)[0, :4], stack(y, pos)[0, :4], atol=1e-6)
    assert not torch.allclose(stack(x, pos)[0, 4:], stack(y, pos)[0, 4:])


# --- the models ------------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(MODELS))
def test_forward_and_backward(name):
    torch.manual_seed(0)
    model = build(MODELS[name]).train()
    out = model_loss(model, make_batch())
    assert torch.isfinite(out["loss"])
    assert ("topic_loss" in out) == MODELS[name].aux
    out["loss"].backward()
    grads = {n: p.grad for n, p in model.named_parameters()}
    assert all(g is not None for g in grads.values()), [n for n, g in grads.items() if g is None]
    assert grads["project.linear.weight"].abs().sum() > 0


def test_trained_encoder_reads_images():
    torch.manual_seed(0)
    config = replace(MODELS["ttnet-base"], freeze_encoder=False)
    model = build(config).train()
    batch = make_batch()
    batch["inputs"] = torch.randn(*batch["state_mask"].shape, 3, 64, 64)
    model_loss(model, batch)["loss"].backward()
    assert model.image_encoder.visual.conv1.weight.grad.abs().sum() > 0


#: (model, steps at most, lr): GLACNet without dropout, with one LSTM layer (a 2-layer LSTM this
#: narrow takes several hundred steps) and the training vocabulary (fast)
OVERFIT = {
    "ttnet": (MODELS["ttnet"], 200, 3e-3),
    "ttnet-base": (MODELS["ttnet-base"], 200, 3e-3),
    "glacnet": (replace(MODELS["glacnet-train-vocab"], lstm_layers=1, lstm_dropout=0.0,
                        embed_dropout=0.0), 300, 3e-3),
    "ttnet-train-vocab": (MODELS["ttnet-train-vocab"], 200, 3e-3),
}  # fmt: skip


@pytest.mark.parametrize("name", list(OVERFIT))
def test_overfits_a_few_samples(name):
    config, steps, lr = OVERFIT[name]
    torch.manual_seed(0)
    model = build(config)
    batch = make_batch()
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    beam = DecodeOptions("beam", beam_size=3)
    for step in range(steps):
        model.train()
        loss = model_loss(model, batch)["loss"]
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 20 == 19 and texts(model, batch) == LABELS == texts(model, batch, beam):
            break
    assert texts(model, batch) == LABELS
    assert texts(model, batch, DecodeOptions("beam", beam_size=1)) == LABELS
    assert texts(model, batch, beam) == LABELS


@pytest.mark.parametrize("name", ["ttnet", "glacnet", "glacnet-train-vocab"])
def test_decoding_is_deterministic_and_sampling_is_seeded(name):
    torch.manual_seed(1)
    model = build(replace(MODELS[name], max_tokens=8))
    batch = make_batch()
    greedy = texts(model, batch)
    assert texts(model, batch) == greedy
    beam = texts(model, batch, DecodeOptions("beam", beam_size=4))
    assert texts(model, batch, DecodeOptions("beam", beam_size=4)) == beam
    sample = texts(model, batch, DecodeOptions("sample", seed=5))
    assert texts(model, batch, DecodeOptions("sample", seed=5)) == sample
    assert texts(model, batch, DecodeOptions("sample", seed=6)) != sample
    for out in (greedy, beam, sample):
        assert [len(s) for s in out] == [len(s) for s in LABELS]
        assert all(x for s in out for x in s)  # never an empty description


def test_train_vocabulary_reads_unknown_ids_and_predicts_known_ones():
    torch.manual_seed(0)
    model = build(MODELS["ttnet-train-vocab"])
    assert model.vocab_size == len(VOCAB_IDS) + 1  # SOT and EOT are in VOCAB_IDS already
    assert model.decoder.to_logits.out_features == model.vocab_size
    # a description with words the model does not know: read as "unknown", not a target
    batch = make_batch([["cut the pineapple"], ["pour milk"]])
    assert torch.isfinite(model_loss(model, batch)["loss"])
    model.eval()
    with torch.no_grad():
        ids = model.generate(make_batch(), DecodeOptions("sample", seed=0, top_k=0, top_p=1.0))
    assert {i for sample in ids for x in sample for i in x} <= set(VOCAB_IDS)


def test_an_interrupted_encoding_keeps_what_it_saved(tmp_path, monkeypatch):
    """Issue 28: an interrupted `vtt baseline nearest` kept none of its encoding work. The
    cache is saved while encoding, so the next run encodes only what is left."""
    from tvr.vtt.models import features as features_mod

    paths = _write_jpegs(tmp_path / "states", 5, seed=3)
    spec = EncoderSpec("tvr-tiny")
    monkeypatch.setattr(features_mod, "SAVE_EVERY_S", 0.0)
    real = features_mod.load_image
    loaded = []

    def interrupted(path, transform):
        if len(loaded) == 4:  # the third batch of two
            raise KeyboardInterrupt
        loaded.append(path)
        return real(path, transform)

    monkeypatch.setattr(features_mod, "load_image", interrupted)
    with pytest.raises(KeyboardInterrupt):
        FeatureCache(spec, tmp_path / "cache").get(paths, batch_size=2)
    monkeypatch.setattr(features_mod, "load_image", real)
    resumed = FeatureCache(spec, tmp_path / "cache")
    assert len(resumed.index) == 4  # two batches were saved
    feats = resumed.get(paths, batch_size=2)
    assert resumed.encoded == 1
    assert torch.allclose(feats, FeatureCache(spec, None).get(paths), atol=1e-5)
