"""TrancoNet: names, shapes and parameter counts, CLIP weights from a file, masks, greedy decoding,
forward and backward for every decoder and strategy, and overfitting a few samples."""

import json

import pytest
import torch
import torch.nn.functional as F

from tvr.core.errors import UserError
from tvr.tranco.models import build_model, parse_model_name
from tvr.tranco.models.encoders import build_image_encoder, parameter_count, weights_digest
from tvr.tranco.models.trancenet import (
    IGNORE,
    STOP,
    clip_vectors,
    contrastive_loss,
    greedy_decode,
    scored_candidates,
    step_masks,
)
from tvr.tranco.train.config import TrancoTrainConfig
from tvr.tranco.train.module import build_config_model

torch.set_num_threads(1)


def test_model_names_take_the_papers_spellings():
    assert parse_model_name("ViT-B/32-T").name == "vitb32-t"
    assert parse_model_name("RN101-G").name == "rn101-g"
    assert parse_model_name("vit-b-16-t").name == "vitb16-t"
    assert parse_model_name("small-g").label == "small ViT-G"
    for bad in ("vitb32", "vitb32-x", "resnet-t"):
        with pytest.raises(ValueError, match="unknown TrancoNet model"):
            parse_model_name(bad)


def test_heads_have_table_10s_trainable_parameters():
    # Table 10: 7.4M trainable parameters for the -T models, 6.3M for RN101-G
    t = parameter_count(build_model("rn101-t", with_encoder=False))
    g = parameter_count(build_model("rn101-g", with_encoder=False))
    assert round(t / 1e6, 1) == 7.4 and round(g / 1e6, 1) == 6.3
    assert parameter_count(build_model("vitb32-t", with_encoder=False)) == t


def test_vitb32_image_tower_has_table_10s_fixed_parameters():
    encoder = build_image_encoder("vitb32")
    assert round(parameter_count(encoder) / 1e6, 1) == 87.8  # Table 10: 87.8M fixed
    assert encoder.image_size == 224 and encoder.embed_dim == 512


def _clip_checkpoint(tmp_path, name="small", seed=3):
    torch.manual_seed(seed)
    encoder = build_image_encoder(name)
    path = tmp_path / f"{name}-clip.pt"
    # a whole CLIP model's state dict: the image tower under "visual." (as the encoder's own
    # state names it), and a text part
    state = dict(encoder.state_dict())
    assert all(k.startswith("visual.") for k in state)
    state["token_embedding.weight"] = torch.zeros(3, 4)
    torch.save(state, path)
    return path, weights_digest(encoder)


@pytest.mark.filterwarnings("ignore::torch.jit.TracerWarning", "ignore::FutureWarning")
def test_clip_weights_come_from_a_local_file(tmp_path):
    path, digest = _clip_checkpoint(tmp_path)
    assert weights_digest(build_image_encoder("small", path)) == digest
    assert weights_digest(build_image_encoder("small")) != digest  # random init differs
    # a TorchScript archive, as OpenAI's CLIP files are
    scripted = tmp_path / "scripted.pt"
    encoder = build_image_encoder("small", path).eval()
    torch.jit.save(torch.jit.trace(encoder, torch.randn(1, 3, 64, 64), check_trace=False), scripted)
    assert weights_digest(build_image_encoder("small", scripted)) == digest
    with pytest.raises(UserError, match="no such file"):
        build_image_encoder("small", tmp_path / "absent.pt")
    with pytest.raises(UserError, match="not the image tower of small RN"):
        build_image_encoder("smallrn", path)
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"not a checkpoint")
    with pytest.raises(UserError, match="not a CLIP checkpoint"):
        build_image_encoder("small", junk)


def test_weights_of_a_whole_open_clip_model_load(tmp_path):
    """A CLIP model made by open_clip itself (our small config with a small text tower), saved
    as open_clip saves checkpoints: its image tower is what the encoder loads."""
    import open_clip

    from tvr.tranco.models.encoders import encoder_spec

    config = encoder_spec("small").model_config()
    config["text_cfg"] = {"context_length": 8, "vocab_size": 50, "width": 32, "heads": 2,
                          "layers": 1}  # fmt: skip
    (tmp_path / "tvr-small-test.json").write_text(json.dumps(config))
    open_clip.add_model_config(tmp_path / "tvr-small-test.json")
    clip = open_clip.create_model("tvr-small-test", pretrained=None)
    path = tmp_path / "open_clip_pytorch_model.bin"
    torch.save({"state_dict": {f"module.{k}": v for k, v in clip.state_dict().items()}}, path)
    images = torch.randn(2, 3, 64, 64)
    # this config has GELU (no "quick_gelu"): as LAION-trained open_clip weights
    assert torch.equal(build_image_encoder("small", path, quick_gelu=False)(images),
                       clip.visual(images))  # fmt: skip
    assert not torch.allclose(build_image_encoder("small", path)(images), clip.visual(images))


def test_step_masks_hide_earlier_targets_padding_and_early_stop():
    available = torch.tensor([[True, True, True, True, False]])
    targets = torch.tensor([[2, 1, STOP, IGNORE]])
    allowed = step_masks(available, targets, min_steps=1)
    assert allowed[0].tolist() == [
        [False, True, True, True, False],  # no stop before the first clip
        [True, True, False, True, False],  # clip 2 was picked
        [True, False, False, True, False],
        [True, False, False, True, False],
    ]


def test_clip_vectors_average_only_real_frames():
    frames = torch.tensor([[[1.0, 0.0], [0.0, 1.0], [5.0, 5.0]]])
    mask = torch.tensor([[True, True, False]])
    assert torch.allclose(
        clip_vectors(frames, mask), F.normalize(torch.tensor([[0.5, 0.5]]), dim=-1)
    )


def _random_batch(batch=3, k=6, dim=128, seed=0):
    g = torch.Generator().manual_seed(seed)
    states = F.normalize(torch.randn(batch, 2, dim, generator=g), dim=-1)
    clips = F.normalize(torch.randn(batch, k, dim, generator=g), dim=-1)
    return states, scored_candidates(states[:, 1], clips)


@pytest.mark.parametrize("decoder", ["t", "g"])
def test_greedy_decoding_never_repeats_and_respects_the_limits(decoder):
    model = build_model(f"small-{decoder}", with_encoder=False).eval()
    states, candidates = _random_batch(batch=8, k=5)
    available = torch.ones(8, 6, dtype=torch.bool)
    available[0, 3:] = False  # sample 0 has two candidates only
    for max_steps, min_steps in ((7, 1), (3, 2), (2, 0)):
        picks = greedy_decode(model.head, states, candidates, available, max_steps, min_steps)
        for b, seq in enumerate(picks):
            assert len(seq) == len(set(seq)) and len(seq) <= max_steps
            assert all(1 <= i <= 5 and bool(available[b, i]) for i in seq)
            assert len(seq) >= min(min_steps, int(available[b, 1:].sum()))
    # a head whose step vector is the final state's picks stop at once when it may
    model.head.steps.forward = lambda h, inputs: candidates[:, :1].expand(-1, inputs.shape[1], -1)
    assert greedy_decode(model.head, states, candidates, available, 7, 0) == [[]] * 8


@pytest.mark.parametrize("strategy", ["frozen", "scratch", "finetune"])
@pytest.mark.parametrize("model_name", ["small-t", "small-g", "smallrn-t"])
def test_forward_and_backward_for_every_decoder_and_strategy(tmp_path, strategy, model_name):
    weights = None
    if strategy == "finetune":
        weights, _ = _clip_checkpoint(tmp_path, model_name.split("-")[0])
    config = TrancoTrainConfig(data="unused", model=model_name, strategy=strategy,
                               clip_weights=str(weights) if weights else None)  # fmt: skip
    model = build_config_model(config)
    assert (model.encoder is None) == (strategy == "frozen")
    batch, k, frames = 2, 4, 3
    if model.encoder is None:
        images = None
        features = F.normalize(torch.randn(2 + k * frames, model.head.cfg.dim), dim=-1)
    else:
        images = torch.randn(2 + k * frames, 3, 64, 64)
        features = model.embed(images)
    states = features[:2].expand(batch, 2, -1)
    clips = clip_vectors(features[2:].view(k, frames, -1).expand(batch, k, frames, -1),
                         torch.ones(batch, k, frames, dtype=torch.bool))  # fmt: skip
    candidates = scored_candidates(states[:, 1], clips)
    targets = torch.tensor([[1, 3, STOP], [2, STOP, IGNORE]])
    previous = candidates[torch.arange(batch)[:, None], targets[:, :-1].clamp(min=0)]
    g = model.head.step_vectors(states, previous)
    assert g.shape == (batch, 3, model.head.cfg.dim)
    allowed = step_masks(torch.ones(batch, k + 1, dtype=torch.bool), targets)
    loss = contrastive_loss(model.head.logits(g, candidates), targets, allowed)
    loss.backward()
    assert torch.isfinite(loss)
    assert all(p.grad is not None for p in model.head.parameters())
    if model.encoder is not None:
        assert any(
            p.grad is not None and p.grad.abs().sum() > 0 for p in model.encoder.parameters()
        )


@pytest.mark.parametrize("decoder", ["t", "g"])
def test_overfits_a_few_samples(decoder):
    """Six samples of 2-4 steps among 8 candidates each: the head learns them exactly."""
    torch.manual_seed(0)
    model = build_model(f"small-{decoder}", with_encoder=False, dropout=0.0)
    states, candidates = _random_batch(batch=6, k=8, seed=1)
    lengths = [2, 3, 4, 2, 3, 4]
    g = torch.Generator().manual_seed(2)
    targets = torch.full((6, 5), IGNORE)
    for b, n in enumerate(lengths):
        targets[b, :n] = torch.randperm(8, generator=g)[:n] + 1
        targets[b, n] = STOP
    available = torch.ones(6, 9, dtype=torch.bool)
    allowed = step_masks(available, targets)
    previous = candidates[torch.arange(6)[:, None], targets[:, :-1].clamp(min=0)]
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    for _ in range(150):
        loss = contrastive_loss(model.head.logits(model.head.step_vectors(states, previous),
                                                  candidates), targets, allowed)  # fmt: skip
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    picks = greedy_decode(model.head, states, candidates, available)
    wanted = [targets[b, :n].tolist() for b, n in enumerate(lengths)]
    assert picks == wanted  # EMR 1.0
