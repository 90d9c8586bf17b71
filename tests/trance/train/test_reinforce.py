"""REINFORCE fine-tuning raises the mean reward on the batch it trains on."""

import numpy as np
import pytest
import torch

from tests.trance.models.helpers import TINY, tiny_batch
from tvr.trance.models import build_model
from tvr.trance.train.losses import _rewards, paper_loss, policy_gradient_loss, supervised_loss


def _warm_model(batch, steps: int = 20):
    """A -T model trained a little by teacher forcing (REINFORCE fine-tunes a trained model)."""
    torch.manual_seed(0)
    model = build_model("cnn+-t", "event", TINY)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(steps):
        loss = supervised_loss(model, batch, batch["init_image"], batch["final_image"])["loss"]
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model, opt


def _mean_reward(model, batch, kind: str) -> float:
    """Expected reward of the sampling policy, estimated with 32 samples per input."""
    g = torch.Generator().manual_seed(123)
    with torch.no_grad():
        d = model.decode(
            batch["init_image"],
            batch["final_image"],
            batch["objects"],
            sample=True,
            repeats=32,
            generator=g,
        )
    r, _ = _rewards(batch, d.objs, d.values, kind, repeats=32)
    return float(r.mean())


@pytest.mark.parametrize(
    ("reward", "baseline"), [("both", "mean"), ("corr", "greedy"), ("dist", "mean")]
)
def test_policy_gradient_raises_mean_reward(reward, baseline):
    batch = tiny_batch(8, "event")
    model, opt = _warm_model(batch)
    before = _mean_reward(model, batch, reward)
    for _ in range(40):
        out = policy_gradient_loss(
            model, batch, batch["init_image"], batch["final_image"], reward, 8, baseline
        )
        opt.zero_grad()
        out.loss.backward()
        opt.step()
    after = _mean_reward(model, batch, reward)
    print(f"\nREINFORCE {reward}/{baseline}: mean reward {before:.3f} -> {after:.3f}")
    assert after > before + 0.1


def test_paper_variant_raises_mean_reward():
    batch = tiny_batch(8, "event")
    model, opt = _warm_model(batch)
    before = _mean_reward(model, batch, "both")
    for _ in range(30):
        out = paper_loss(model, batch, batch["init_image"], batch["final_image"], "both")
        opt.zero_grad()
        out.loss.backward()
        opt.step()
    after = _mean_reward(model, batch, "both")
    print(f"\npaper variant: mean reward {before:.3f} -> {after:.3f}")
    assert after > before + 0.1


def test_leave_one_out_baseline(monkeypatch):
    """Equal rewards give no gradient; the advantage is the reward minus the others' mean."""
    import tvr.trance.train.losses as losses

    batch = tiny_batch(2, "event")
    model = build_model("cnn+-t", "event", TINY)
    monkeypatch.setattr(losses, "_rewards", lambda *a, **k: (np.full(8, 0.7), np.zeros(8, bool)))
    out = policy_gradient_loss(
        model, batch, batch["init_image"], batch["final_image"], "both", 4, "mean"
    )
    assert out.loss.item() == 0.0

    rewards = np.array([1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    monkeypatch.setattr(losses, "_rewards", lambda *a, **k: (rewards, rewards > 0))
    torch.manual_seed(0)
    out = policy_gradient_loss(
        model, batch, batch["init_image"], batch["final_image"], "both", 4, "mean"
    )
    torch.manual_seed(0)
    d = model.decode(
        batch["init_image"], batch["final_image"], batch["objects"], sample=True, repeats=4
    )
    adv = torch.tensor([1.0, -1 / 3, -1 / 3, -1 / 3, 0, 0, 0, 0])
    torch.testing.assert_close(out.loss, -(adv * d.log_prob).mean())
