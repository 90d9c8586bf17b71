"""Steps per second of the TRANCE Gymnasium environments (tvr.trance.env), single and vectorised.

Random actions on tvr/TRANCE-Event-v0 (resets included: an episode is at most 4 steps, so most
of the time goes to drawing samples and, with images, rendering two raster images per reset).

    python benchmarks/trance_env_speed.py [--steps 2000] [--num-envs 8]

Figures: docs/env.md.
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym
import numpy as np

import tvr.trance.env  # noqa: F401  (registers the environments)

ENV_ID = "tvr/TRANCE-Event-v0"


def single(steps: int, **kwargs) -> float:
    env = gym.make(ENV_ID, **kwargs)
    env.reset(seed=0)
    env.action_space.seed(0)
    start = time.perf_counter()
    for _ in range(steps):
        _, _, term, trunc, _ = env.step(env.action_space.sample())
        if term or trunc:
            env.reset()
    return steps / (time.perf_counter() - start)


def vector(steps: int, num_envs: int, mode: str, **kwargs) -> float:
    # spawn: a forked worker would inherit the parent's OpenGL context
    vec = {"context": "spawn"} if mode == "async" else {}
    envs = gym.make_vec(
        ENV_ID, num_envs=num_envs, vectorization_mode=mode, vector_kwargs=vec, **kwargs
    )
    try:
        envs.reset(seed=0)
        envs.action_space.seed(0)
        rounds = max(steps // num_envs, 1)
        start = time.perf_counter()
        for _ in range(rounds):
            envs.step(envs.action_space.sample())  # autoreset
        return rounds * num_envs / (time.perf_counter() - start)
    finally:
        envs.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--num-envs", type=int, default=8)
    args = ap.parse_args()
    img = {"obs_mode": "images", "image_size": (160, 120)}
    rows = [
        ("symbolic", "single", lambda: single(args.steps)),
        ("symbolic", f"sync x{args.num_envs}", lambda: vector(args.steps, args.num_envs, "sync")),
        ("symbolic", f"async x{args.num_envs}", lambda: vector(args.steps, args.num_envs, "async")),
        ("images 160x120", "single", lambda: single(args.steps // 10, **img)),
        ("images 160x120", f"sync x{args.num_envs}",
         lambda: vector(args.steps // 10, args.num_envs, "sync", **img)),
        ("images 160x120", f"async x{args.num_envs}",
         lambda: vector(args.steps // 10, args.num_envs, "async", **img)),
    ]  # fmt: skip
    print("| observation | environments | steps/s |")
    print("|---|---|---:|")
    for obs, how, fn in rows:
        print(f"| {obs} | {how} | {np.round(fn(), 0):.0f} |", flush=True)


if __name__ == "__main__":
    main()
