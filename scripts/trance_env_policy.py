"""A tiny REINFORCE policy on tvr/TRANCE-Basic-v0 (symbolic observations), against a random one.

A two-layer MLP reads the initial and final states (10 x 6 each, one-hot attributes and scaled
positions), picks one Discrete action (object * 33 + value) and gets the environment's reward
(the simulator's REINFORCE reward, "both": correctness minus normalized distance). Needs the
`gym` and `train` extras. CPU, about a minute:

    python scripts/trance_env_policy.py --episodes 20000 --batch 64

Prints the mean reward and accuracy of a random policy and of the trained one on 500 held-out
episodes (seeds not used in training). Figures: docs/env.md.
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym
import numpy as np
import torch
from torch import nn

import tvr  # noqa: F401  (registers the environments)
from tvr.trance.world import vocab

SIZES = (len(vocab.SIZES), len(vocab.COLORS), len(vocab.MATERIALS), len(vocab.SHAPES))


def features(init: np.ndarray, final: np.ndarray) -> np.ndarray:
    """(B, 10, 6) states -> (B, F): scaled positions and one-hot categories of both states."""
    out = []
    for s in (init, final):
        out.append(s[..., :2] / 40.0)
        for c, n in enumerate(SIZES):
            out.append(np.eye(n)[s[..., 2 + c]])
    diff = (final != init).astype(np.float64)
    x = np.concatenate([*out, diff], axis=-1)
    return x.reshape(len(x), -1).astype(np.float32)


def run_episodes(envs, policy, seed: int, greedy: bool = False, train: bool = False):
    """One Basic episode in each environment: (rewards, correct, log-probs)."""
    obs, _ = envs.reset(seed=seed)
    x = torch.from_numpy(features(obs["init_state"], obs["final_state"]))
    if policy is None:
        actions = torch.randint(0, envs.single_action_space.n - 1, (len(x),))
        logp = None
    else:
        with torch.set_grad_enabled(train):
            dist = torch.distributions.Categorical(logits=policy(x))
            actions = dist.probs.argmax(-1) if greedy else dist.sample()
            logp = dist.log_prob(actions)
    _, r, term, _, info = envs.step(actions.numpy())
    assert term.all()
    return r, info["correct"], logp


def evaluate(envs, policy, seeds) -> tuple[float, float]:
    rs, cs = [], []
    for s in seeds:
        r, c, _ = run_episodes(envs, policy, s, greedy=True)
        rs.append(r)
        cs.append(c)
    return float(np.mean(rs)), float(np.mean(cs))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=20000)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=3e-3)
    args = ap.parse_args()
    torch.manual_seed(0)
    envs = gym.make_vec("tvr/TRANCE-Basic-v0", num_envs=args.batch, vectorization_mode="sync")
    nf = features(np.zeros((1, 10, 6), int), np.zeros((1, 10, 6), int)).shape[1]
    policy = nn.Sequential(
        nn.Linear(nf, 256), nn.ReLU(), nn.Linear(256, envs.single_action_space.n)
    )
    opt = torch.optim.Adam(policy.parameters(), lr=args.lr)
    held_out = range(10**6, 10**6 + max(500 // args.batch, 1))
    rand = evaluate(envs, None, held_out)
    start = time.perf_counter()
    for it in range(args.episodes // args.batch):
        r, c, logp = run_episodes(envs, policy, seed=it, train=True)
        r = torch.as_tensor(r, dtype=torch.float32)
        loss = -((r - r.mean()) * logp).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        if it % 50 == 0:
            print(
                f"episodes {(it + 1) * args.batch:6d}  reward {r.mean():+.3f}  acc {c.mean():.3f}"
            )
    secs = time.perf_counter() - start
    trained = evaluate(envs, policy, held_out)
    n = len(held_out) * args.batch
    print(f"held-out episodes: {n}, training {secs:.0f} s")
    print(f"random policy:  reward {rand[0]:+.3f}  accuracy {rand[1]:.3f}")
    print(f"trained policy: reward {trained[0]:+.3f}  accuracy {trained[1]:.3f}")
    envs.close()


if __name__ == "__main__":
    main()
