"""Every model builds, runs teacher-forced forward + backward, and decodes, on a tiny batch."""

import math

import pytest
import torch

from tests.trance.models.helpers import TINY, tiny_batch
from tvr.trance.models import ALL_MODELS, OBJ_END, VALUE_END, build_model
from tvr.trance.train.losses import supervised_loss


@pytest.fixture(scope="module")
def event_batch():
    return tiny_batch(3, "event")


@pytest.fixture(scope="module")
def basic_batch():
    return tiny_batch(3, "basic")


def _check_grads(model):
    grads = [p.grad for p in model.parameters() if p.requires_grad]
    assert all(g is not None for g in grads), "every parameter takes part in the loss"
    assert all(torch.isfinite(g).all() for g in grads)
    assert any(g.abs().sum() > 0 for g in grads)


TVR_FORMS = {"decoder_form": "tvr", "duda_form": "tvr"}
#: every model in the default (original) forms, and those that have a tvr form in it
CASES = [(name, "original") for name in ALL_MODELS] + [
    (name, "tvr") for name in ALL_MODELS if name.endswith("-t") or name.startswith("duda")
]


@pytest.mark.parametrize(("name", "form"), CASES)
def test_sequence_model(name, form, event_batch):
    torch.manual_seed(0)
    b = event_batch
    model = build_model(name, "event", TINY, **(TVR_FORMS if form == "tvr" else {}))
    obj_logits, value_logits = model(
        b["init_image"], b["final_image"], b["objects"], b["obj_target"], b["value_target"]
    )
    assert obj_logits.shape == (3, 5, 11)
    assert value_logits.shape == (3, 5, 34)
    loss = supervised_loss(model, b, b["init_image"], b["final_image"])["loss"]
    assert math.isfinite(loss.item())
    loss.backward()
    _check_grads(model)

    model.eval()
    with torch.no_grad():
        for sample in (False, True):
            d = model.decode(b["init_image"], b["final_image"], b["objects"], sample=sample)
            assert d.objs.shape == d.values.shape == (3, 5)
            assert (d.objs[:, -1] == OBJ_END).all(), "the fifth position always ends"
            assert torch.isfinite(d.log_prob).all()
            for seq in d.steps():
                assert len(seq) <= 4
                assert all(0 <= o < 10 and 0 <= v < 33 for o, v in seq)
            # after the end token everything is the end token
            ended = (d.objs == OBJ_END).int().cumsum(1) > 0
            assert (d.objs[ended] == OBJ_END).all() and (d.values[ended] == VALUE_END).all()


@pytest.mark.parametrize(
    ("name", "form"),
    [(n, "original") for n in ("cnn--g", "cnn+-g", "resnet--g", "resnet+-g", "bcnn-g", "duda-g")]
    + [("duda-g", "tvr")],
)
def test_basic_model(name, form, basic_batch):
    torch.manual_seed(0)
    b = basic_batch
    model = build_model(name, "basic", TINY, **(TVR_FORMS if form == "tvr" else {}))
    obj_logits, value_logits = model(
        b["init_image"], b["final_image"], b["objects"], b["obj_target"], b["value_target"]
    )
    assert obj_logits.shape == (3, 1, 10)
    assert value_logits.shape == (3, 1, 33)
    supervised_loss(model, b, b["init_image"], b["final_image"])["loss"].backward()
    _check_grads(model)
    model.eval()
    with torch.no_grad():
        d = model.decode(b["init_image"], b["final_image"], b["objects"])
    assert d.objs.shape == (3, 1)
    assert all(len(s) == 1 for s in d.steps())


def test_teacher_forcing_feeds_reference_steps_causally(event_batch):
    """Changing a later reference step changes no score at or before it (causality)."""
    b = event_batch
    for name, forms in (("cnn+-g", {}), ("cnn+-t", {}), ("cnn+-t", TVR_FORMS)):
        torch.manual_seed(0)
        model = build_model(name, "event", TINY, **forms).eval()
        args = (b["init_image"], b["final_image"], b["objects"])
        with torch.no_grad():
            o1, v1 = model(*args, b["obj_target"], b["value_target"])
            objs = b["obj_target"].clone()
            objs[:, 2] = (objs[:, 2].clamp(0, 9) + 1) % 10
            o2, v2 = model(*args, objs, b["value_target"])
        torch.testing.assert_close(o1[:, :3], o2[:, :3])
        torch.testing.assert_close(v1[:, :2], v2[:, :2])
        assert not torch.allclose(o1[:, 3], o2[:, 3])
