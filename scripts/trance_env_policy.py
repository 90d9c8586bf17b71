"""A tiny REINFORCE policy on tvr/TRANCE-Basic-v0 (symbolic observations), against a random one.

The policy scores the 330 step actions (object * 33 + value) with one small MLP shared by the
ten objects: it reads an object's initial and final attributes and their difference (a move, a
changed category) and gives that object's 33 value logits. The reward is the environment's
"corr" (1 if the step is Basic-correct, else 0); REINFORCE with a batch-mean baseline and an
entropy bonus. Needs the `gym` and `train` extras. CPU, about a minute and a half:

    python scripts/trance_env_policy.py --episodes 100000 --batch 128

Prints the mean reward and accuracy (share of episodes solved) of a uniformly random step and of
the trained policy (greedy) on held-out episodes (seeds not used in training). Figures:
docs/env.md.
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym
import numpy as np
import torch
from torch import nn

import tvr.trance.env  # noqa: F401  (registers the environments)
from tvr.trance.world import vocab

SIZES = (len(vocab.SIZES), len(vocab.COLORS), len(vocab.MATERIALS), len(vocab.SHAPES))
HELD_OUT = 10**6  # evaluation seeds start here; training seeds stay below


def features(init: np.ndarray, final: np.ndarray) -> np.ndarray:
    """(B, 10, 6) states -> (B, 10, F) per object: positions and one-hot categories of both
    states, the move (final - initial position) and which categories changed."""
    out = []
    for s in (init, final):
        out.append(s[..., :2] / 40.0)
        out += [np.eye(n)[s[..., 2 + c]] for c, n in enumerate(SIZES)]
    out.append((final[..., :2] - init[..., :2]) / vocab.STEP_UNITS)
    out.append(final[..., 2:] != init[..., 2:])
    return np.concatenate(out, axis=-1).astype(np.float32)


class Policy(nn.Module):
    """The same MLP for every object: (B, 10, F) -> (B, 330) logits, object-major like the env."""

    def __init__(self, nf: int, hidden: int = 64) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(nf, hidden), nn.ReLU(), nn.Linear(hidden, vocab.NUM_VALUES)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x).flatten(1)


def run_episodes(envs, policy, seed: int, greedy: bool = False, train: bool = False):
    """One Basic episode in each environment (seeds seed, seed + 1, ...): (rewards, correct,
    log-probs, entropies). `policy=None` takes a uniformly random step action."""
    obs, _ = envs.reset(seed=seed)
    x = torch.from_numpy(features(obs["init_state"], obs["final_state"]))
    logp = ent = None
    if policy is None:
        actions = torch.randint(0, envs.single_action_space.n - 1, (len(x),))  # no stop
    else:
        with torch.set_grad_enabled(train):
            dist = torch.distributions.Categorical(logits=policy(x))
            actions = dist.probs.argmax(-1) if greedy else dist.sample()
            logp, ent = dist.log_prob(actions), dist.entropy()
    _, r, term, _, info = envs.step(actions.numpy())
    assert term.all()
    return r, info["correct"], logp, ent


def evaluate(envs, policy, batches: int) -> tuple[float, float]:
    n = envs.num_envs
    runs = [run_episodes(envs, policy, HELD_OUT + b * n, greedy=True) for b in range(batches)]
    return float(np.mean([r for r, *_ in runs])), float(np.mean([c for _, c, *_ in runs]))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=100000)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--entropy", type=float, default=0.01, help="entropy bonus weight")
    ap.add_argument("--eval-episodes", type=int, default=1024)
    ap.add_argument("--curve", help="also draw the learning curve (training batches' accuracy) "
                    "into this PNG (needs matplotlib: the report extra)")  # fmt: skip
    args = ap.parse_args()
    torch.manual_seed(0)
    envs = gym.make_vec(
        "tvr/TRANCE-Basic-v0", num_envs=args.batch, vectorization_mode="sync", reward_kind="corr"
    )
    policy = Policy(features(np.zeros((1, 10, 6), int), np.zeros((1, 10, 6), int)).shape[-1])
    opt = torch.optim.Adam(policy.parameters(), lr=args.lr)
    eval_batches = max(args.eval_episodes // args.batch, 1)
    rand = evaluate(envs, None, eval_batches)
    start = time.perf_counter()
    curve: list[tuple[int, float]] = []
    for it in range(args.episodes // args.batch):
        r, c, logp, ent = run_episodes(envs, policy, seed=it * args.batch, train=True)
        r = torch.as_tensor(r, dtype=torch.float32)
        loss = -((r - r.mean()) * logp).mean() - args.entropy * ent.mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        curve.append(((it + 1) * args.batch, float(np.mean(c))))
        if it % 25 == 0:
            n = (it + 1) * args.batch
            print(f"episodes {n:6d}  acc {c.mean():.3f}  entropy {ent.mean():.2f}")
    secs = time.perf_counter() - start
    trained = evaluate(envs, policy, eval_batches)
    print(f"held-out episodes: {eval_batches * args.batch}, training {secs:.0f} s")
    print(f"random policy:  reward {rand[0]:+.3f}  accuracy {rand[1]:.3f}")
    print(f"trained policy: reward {trained[0]:+.3f}  accuracy {trained[1]:.3f}")
    envs.close()
    if args.curve:
        draw_curve(curve, rand[1], trained[1], args.curve)


def draw_curve(curve: list[tuple[int, float]], random_acc: float, final_acc: float, path: str):
    """The training batches' accuracy (a moving mean over 20 batches) against episodes."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = np.array([n for n, _ in curve])
    y = np.array([a for _, a in curve])
    k = min(20, len(y))
    smooth = np.convolve(y, np.ones(k) / k, mode="valid")
    fig, ax = plt.subplots(figsize=(6, 3.2))
    ax.plot(x, y, color="0.8", lw=0.8, label="training batch")
    ax.plot(x[k - 1 :], smooth, color="C0", label=f"mean of {k} batches")
    ax.axhline(random_acc, color="C3", ls="--", label=f"random step ({random_acc:.3f})")
    ax.axhline(final_acc, color="C2", ls=":", label=f"greedy, held out ({final_acc:.3f})")
    ax.set_xlabel("episodes")
    ax.set_ylabel("accuracy (corr reward)")
    ax.set_title("REINFORCE on tvr/TRANCE-Basic-v0")
    ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
