"""The two forms of the -T decoder and of DUDA: the original's (the default) and tvr's first.

The original's figures (398,208 parameters; 8 heads of 64 without Q/K/V biases; GELU
feed-forward of 512; T5 relative position bias; no final LayerNorm; DUDA attention on the pooled
1x1 features without an activation between its convolutions) are read from the public release's
model code; see docs/models.md.
"""

import json

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from tvr.trance.models import DECODER_FORMS, DUDA_FORMS, build_model, count_parameters
from tvr.trance.models.attention import (
    CausalSelfAttention,
    DecoderBlock,
    FeedForward,
    RelativePositionBias,
    relative_position_bucket,
)
from tvr.trance.models.decoders import (
    GRUDecoder,
    RelPosTransformerDecoder,
    TransformerDecoder,
    build_decoder,
)
from tvr.trance.models.encoders import DUDAEncoder, build_encoder
from tvr.trance.train.config import TrainConfig

STEP_INPUT = 19 + 8  # an object vector and a value embedding


def test_original_is_the_default_form():
    assert DECODER_FORMS[0] == DUDA_FORMS[0] == "original"
    assert isinstance(build_decoder("t", STEP_INPUT), RelPosTransformerDecoder)
    assert isinstance(build_decoder("t", STEP_INPUT, form="tvr"), TransformerDecoder)
    assert isinstance(build_decoder("g", STEP_INPUT, form="tvr"), GRUDecoder)
    assert build_encoder("duda", (120, 160)).form == "original"
    model = build_model("resnet--t", "event", (120, 160))
    assert isinstance(model.decoder, RelPosTransformerDecoder)
    assert build_model("duda-g", "event", (120, 160)).encoder.form == "original"


def test_unknown_forms_are_refused():
    with pytest.raises(ValueError, match="decoder form"):
        build_model("resnet--t", "event", decoder_form="paper")
    with pytest.raises(ValueError, match="decoder form"):
        build_model("cnn+-g", "event", decoder_form="paper")  # checked for every model
    with pytest.raises(ValueError, match="DUDA form"):
        build_model("cnn+-g", "basic", duda_form="x")
    with pytest.raises(ValueError, match="decoder_form"):
        TrainConfig(decoder_form="paper")
    with pytest.raises(ValueError, match="duda_form"):
        TrainConfig(duda_form="")


# --- the original -T decoder ------------------------------------------------------------------


def test_original_decoder_has_398208_parameters():
    """398,208 in the original = its input projection (27 -> 128, 3,584) plus its one-layer
    x-transformers Decoder (394,624); tvr's RelPosTransformerDecoder is exactly those two."""
    dec = build_decoder("t", STEP_INPUT, 128)
    parts = {name: count_parameters(m) for name, m in dec.named_children()}
    assert parts["proj"] == 27 * 128 + 128
    assert parts["rel_pos"] == 32 * 8  # one bias per bucket and head
    block = dec.layers[0]
    assert count_parameters(block.attn) == 4 * 128 * 512  # q, k, v, out; no biases
    assert count_parameters(block.ff) == (128 * 512 + 512) + (512 * 128 + 128)
    assert count_parameters(block.attn_norm) == count_parameters(block.ff_norm) == 2 * 128
    assert count_parameters(dec) - parts["proj"] == 394_624
    assert count_parameters(dec) == 398_208


def test_tvr_decoder_keeps_its_598912_parameters():
    assert count_parameters(build_decoder("t", STEP_INPUT, 128, form="tvr")) == 598_912


def test_no_bias_in_queries_keys_values_and_output():
    dec = build_decoder("t", STEP_INPUT)
    attn = dec.layers[0].attn
    for proj in (attn.to_q, attn.to_k, attn.to_v, attn.to_out):
        assert proj.bias is None
    assert attn.to_q.weight.shape == attn.to_k.weight.shape == attn.to_v.weight.shape == (512, 128)
    assert attn.to_out.weight.shape == (128, 512)
    biases = [n for n, _ in dec.named_parameters() if n.endswith("bias")]
    assert all(".attn." not in n for n in biases), biases


def test_no_final_layer_norm():
    dec = build_decoder("t", STEP_INPUT)
    norms = [n for n, m in dec.named_modules() if isinstance(m, nn.LayerNorm)]
    assert norms == ["layers.0.attn_norm", "layers.0.ff_norm"]
    # the output is the residual stream itself: x + attention + feed-forward
    torch.manual_seed(0)
    h, inputs = torch.randn(2, 128), torch.randn(2, 4, STEP_INPUT)
    block = dec.layers[0]
    with torch.no_grad():
        x = dec.proj(inputs) + h[:, None]
        x = x + block.attn(block.attn_norm(x), dec.rel_pos(4))
        x = x + block.ff(block.ff_norm(x))
        torch.testing.assert_close(dec(h, inputs), x)


def test_feed_forward_is_512_wide_with_gelu():
    torch.manual_seed(0)
    ff = FeedForward(128)
    first, last = ff.net[0], ff.net[-1]
    assert (first.in_features, first.out_features, last.out_features) == (128, 512, 128)
    x = torch.randn(3, 128) * 3
    with torch.no_grad():
        want = last(F.gelu(first(x)))
        torch.testing.assert_close(ff(x), want)
        assert not torch.allclose(ff(x), last(F.relu(first(x))), atol=1e-3)


def test_attention_computes_causal_scaled_dot_products_with_the_bias():
    torch.manual_seed(0)
    attn = CausalSelfAttention(16, heads=2, head_dim=4)
    x, bias = torch.randn(3, 5, 16), torch.randn(2, 5, 5)
    with torch.no_grad():
        q, k, v = (
            p(x).view(3, 5, 2, 4).permute(0, 2, 1, 3) for p in (attn.to_q, attn.to_k, attn.to_v)
        )
        want = torch.zeros(3, 2, 5, 4)
        for i in range(5):  # query i attends to keys 0..i
            dots = q[:, :, i : i + 1] @ k[:, :, : i + 1].transpose(-1, -2)
            s = dots / 2 + bias[:, i : i + 1, : i + 1]
            want[:, :, i] = (s.softmax(-1) @ v[:, :, : i + 1])[:, :, 0]
        want = attn.to_out(want.permute(0, 2, 1, 3).reshape(3, 5, 8))
        torch.testing.assert_close(attn(x, bias), want)


# T5's causal buckets, 32 buckets up to distance 128: exact below 16, then
# 16 + floor(log(n / 16) / log(8) * 16), at most 31; keys ahead of the query: 0
T5_BUCKETS = {-3: 0, 0: 0, 1: 1, 7: 7, 15: 15, 16: 16, 20: 17, 32: 21, 48: 24, 64: 26}
T5_BUCKETS |= {127: 31, 128: 31, 1000: 31}


def test_t5_buckets():
    distances = torch.tensor(list(T5_BUCKETS))
    assert relative_position_bucket(distances).tolist() == list(T5_BUCKETS.values())


def test_bias_depends_on_the_bucket_of_the_distance_only():
    torch.manual_seed(0)
    rel = RelativePositionBias(heads=8, scale=8.0)
    bias = rel(40)
    assert bias.shape == (8, 40, 40)
    i, j = torch.meshgrid(torch.arange(40), torch.arange(40), indexing="ij")
    want = rel.embedding.weight[relative_position_bucket(i - j)].permute(2, 0, 1) * 8.0
    torch.testing.assert_close(bias, want)
    # constant along diagonals (relative, not absolute, positions)
    torch.testing.assert_close(bias[:, 1:, 1:], bias[:, :-1, :-1])
    # distances 32 and 33 share a bucket (21); 15 and 16 do not
    torch.testing.assert_close(bias[:, 33, 1], bias[:, 33, 0])
    assert not torch.allclose(bias[:, 16, 1], bias[:, 16, 0])


def test_the_decoder_uses_its_bias_by_distance_and_causally():
    """Changing the bias of distance 3 changes exactly the positions that have a key 3 back."""
    torch.manual_seed(0)
    dec = build_decoder("t", STEP_INPUT).eval()
    h, inputs = torch.randn(2, 128), torch.randn(2, 6, STEP_INPUT)
    with torch.no_grad():
        before = dec(h, inputs)
        dec.rel_pos.embedding.weight[3] += 1.0
        after = dec(h, inputs)
    changed = (before - after).abs().amax(dim=(0, 2)) > 1e-6
    assert changed.tolist() == [False, False, False, True, True, True]


def test_one_bias_table_shared_by_all_layers():
    dec = RelPosTransformerDecoder(STEP_INPUT, 128, depth=2)
    tables = [n for n, m in dec.named_modules() if isinstance(m, nn.Embedding)]
    assert tables == ["rel_pos.embedding"]
    assert all(isinstance(layer, DecoderBlock) for layer in dec.layers)
    assert count_parameters(dec) == 398_208 + count_parameters(dec.layers[1])


def test_decoder_is_causal_and_has_no_absolute_positions():
    torch.manual_seed(0)
    dec = build_decoder("t", STEP_INPUT).eval()
    h, inputs = torch.randn(2, 128), torch.randn(2, 5, STEP_INPUT)
    with torch.no_grad():
        full = dec(h, inputs)
        later = inputs.clone()
        later[:, 3:] = torch.randn(2, 2, STEP_INPUT)
        torch.testing.assert_close(dec(h, later)[:, :3], full[:, :3])
        assert not torch.allclose(dec(h, later)[:, 3:], full[:, 3:])
        # a prefix decodes the same on its own (what step-by-step decoding relies on)
        torch.testing.assert_close(dec(h, inputs[:, :2]), full[:, :2])
    assert not any("pos" in n and "rel_pos" not in n for n, _ in dec.named_parameters())


# --- DUDA ---------------------------------------------------------------------------------------


def _attention_input_sizes(encoder: DUDAEncoder, size: tuple[int, int]) -> list[tuple[int, ...]]:
    seen = []
    hook = encoder.attention[0].register_forward_hook(lambda m, i, o: seen.append(i[0].shape))
    with torch.no_grad():
        x = torch.rand(2, 3, *size)
        encoder.eval()(x, x.flip(-1))
    hook.remove()
    return [tuple(s[2:]) for s in seen]


def test_duda_attention_runs_on_pooled_features_in_the_original():
    assert _attention_input_sizes(DUDAEncoder("original"), (120, 160)) == [(1, 1), (1, 1)]
    assert _attention_input_sizes(DUDAEncoder("tvr"), (120, 160)) == [(4, 5), (4, 5)]


def test_duda_original_attention_has_no_activation_between_its_convolutions():
    torch.manual_seed(0)
    enc = DUDAEncoder("original").eval()
    layers = list(enc.attention)
    assert [type(m) for m in layers] == [nn.Conv2d, nn.Conv2d, nn.Sigmoid]
    assert [(c.in_channels, c.out_channels, c.kernel_size) for c in layers[:2]] == [
        (1024, 512, (3, 3)),
        (512, 512, (3, 3)),
    ]
    tvr = [type(m) for m in DUDAEncoder("tvr").attention]
    assert tvr == [nn.Conv2d, nn.ReLU, nn.Conv2d, nn.Sigmoid]
    # behaviour: on pooled features the attention is sigmoid(W2 (W1 z + b1) + b2), W the centre
    # taps; a ReLU between the convolutions would differ where W1 z + b1 < 0
    init, final = torch.rand(2, 3, 64, 96), torch.rand(2, 3, 64, 96)
    with torch.no_grad():
        x_init, x_final = (enc.trunk(x).mean(dim=(2, 3)) for x in (init, final))
        conv1, conv2 = layers[0], layers[1]

        def attend(z):
            mid = z @ conv1.weight[:, :, 1, 1].T + conv1.bias
            assert (mid < 0).any()
            return torch.sigmoid(mid @ conv2.weight[:, :, 1, 1].T + conv2.bias)

        diff = x_final - x_init
        l_init = x_init * attend(torch.cat([x_init, diff], dim=1))
        l_final = x_final * attend(torch.cat([x_final, diff], dim=1))
        want = torch.cat([l_init, l_final, l_final - l_init], dim=1)
        torch.testing.assert_close(enc(init, final), want, rtol=1e-4, atol=1e-5)


def test_duda_forms_have_the_same_size_and_do_not_load_into_each_other():
    original, tvr = DUDAEncoder("original"), DUDAEncoder("tvr")
    assert count_parameters(original) == count_parameters(tvr)
    assert original.out_features == tvr.out_features == 1536
    with pytest.raises(RuntimeError):
        original.load_state_dict(tvr.state_dict())


def test_transformer_forms_do_not_load_into_each_other():
    with pytest.raises(RuntimeError):
        build_model("cnn+-t", "event").load_state_dict(
            build_model("cnn+-t", "event", decoder_form="tvr").state_dict()
        )


# --- configs: new runs get the original, old runs reload as they were --------------------------


def test_new_configs_get_the_original_forms_and_save_them(tmp_path):
    cfg = TrainConfig(model="resnet--t")
    assert (cfg.decoder_form, cfg.duda_form) == ("original", "original")
    assert TrainConfig.from_dict({"model": "resnet--t"}) == cfg  # from_dict is the constructor
    cfg.save(tmp_path / "config.json")
    saved = json.loads((tmp_path / "config.json").read_text())
    assert (saved["decoder_form"], saved["duda_form"]) == ("original", "original")
    assert TrainConfig.load(tmp_path / "config.json") == cfg


def test_an_old_config_without_the_fields_reloads_the_old_forms(tmp_path):
    old = TrainConfig(model="resnet--t").to_dict()
    del old["decoder_form"], old["duda_form"]  # as runs wrote config.json before the forms
    (tmp_path / "config.json").write_text(json.dumps(old))
    cfg = TrainConfig.load(tmp_path / "config.json")
    assert (cfg.decoder_form, cfg.duda_form) == ("tvr", "tvr")
    assert TrainConfig.from_saved(old) == cfg  # a checkpoint's saved hyper-parameters
    model = build_model(
        cfg.model,
        cfg.setting,
        cfg.image_size,
        decoder_form=cfg.decoder_form,
        duda_form=cfg.duda_form,
    )
    assert isinstance(model.decoder, TransformerDecoder)
    assert count_parameters(model.decoder) == 598_912
    # a saved config that names its forms keeps them
    assert TrainConfig.from_saved({**old, "decoder_form": "original"}).decoder_form == "original"
