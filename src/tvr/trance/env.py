"""TRANCE as a Gymnasium environment (needs the `gym` extra): `tvr/TRANCE-Basic-v0`, `-Event-v0`, `-View-v0`.

An episode is one TRANCE problem. `reset` draws a sample (from a samples file, or from the
balanced sampler, seeded by the environment's generator); each `step` is one atomic step
(object, value) applied by the simulator (`tvr.trance.world.simulator.apply_step`), or the stop
action. The episode ends at stop, or once `max_steps` steps are taken (one in Basic, four in
Event and View). The reward is 0 until then, and at the end the REINFORCE reward of the training
code (`tvr.trance.train.scoring.reward` on `event_scores`: "corr" 1 if correct, "dist" minus the
normalized distance, or "both" their sum) for the whole sequence. In Basic, "correct" is Basic's
correctness (`basic_scores`: the object right and the value one of the accepted ones).

Observation (a Dict), by `obs_mode`:
- "symbolic" (the fast default): `init_state`, `final_state` (10, 6) and `state` (the initial state
  after the steps taken so far), plus `step` (steps taken); no rendering at all.
- "images": `init_image` (init.C) and `final_image` (fin.C; in View the sample's own view),
  (height, width, 3) uint8 from the raster renderer, plus `step`; `include_state=True` adds
  `init_state`.
- "both": everything above.

Action: Discrete(331): `obj * 33 + value` for a step (object 0..9, value 0..32 of
`tvr.trance.world.vocab.VALUES`), 330 = stop (`encode_action`, `decode_action`).
`info["broken_rule"]`: the rule the step broke ("off_plane", "overlap" or None; `info["noop"]` for
a step that set the value an attribute already had); the step is applied all the same, as the
simulator does. The final step's info adds `correct`, `distance`, `norm_distance`, `sample_id`.

Gymnasium's contract, checked rather than guessed: `step` before `reset`, or after the episode
ended (terminated=True), raises `gymnasium.error.ResetNeeded` (as the `OrderEnforcing` wrapper
does before a reset), so an ended episode never changes; an action outside the action space (or
not an integer: 1.5, "3", True) is a ValueError naming the space; so are `reset(options=...)`
keys other than "index" and "sample", an index that is not an integer in 0..len(samples)-1, a
samples file of another setting (its config.json names another, or Basic samples of more than
one step, View samples, with their `extra["view"]`, given to Basic or Event), and bad settings
(`max_steps` < 1, `image_size` not two positive integers, an unknown `preset` or `render_mode`).

Importing this module registers the three environments (`gymnasium.register`); `import tvr`
does not import Gymnasium and installs no import hook.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.error import ResetNeeded

from tvr.trance.data.sample import Sample
from tvr.trance.train.scoring import REWARDS, basic_scores, event_scores, reward
from tvr.trance.world import simulator as world
from tvr.trance.world import vocab

ENV_IDS = {
    "basic": "tvr/TRANCE-Basic-v0",
    "event": "tvr/TRANCE-Event-v0",
    "view": "tvr/TRANCE-View-v0",
}
OBS_MODES = ("symbolic", "images", "both")
NUM_ACTIONS = vocab.NUM_OBJECTS * vocab.NUM_VALUES + 1
STOP = NUM_ACTIONS - 1

# per column of a state: the lowest and highest value (x, y on the grid; then the categories)
_LOW = np.array([vocab.GRID_MIN - 40, vocab.GRID_MIN - 40, 0, 0, 0, 0], dtype=np.int64)
_HIGH = np.array(
    [
        vocab.GRID_MAX + 40,
        vocab.GRID_MAX + 40,
        len(vocab.SIZES) - 1,
        len(vocab.COLORS) - 1,
        len(vocab.MATERIALS) - 1,
        len(vocab.SHAPES) - 1,
    ],
    dtype=np.int64,
)


def encode_action(obj: int, value: int) -> int:
    """The Discrete action of the step (object 0..9, value 0..32)."""
    return int(obj) * vocab.NUM_VALUES + int(value)


def decode_action(action: int) -> tuple[int, int] | None:
    """(object, value) of a step action; None for stop."""
    action = int(action)
    if action == STOP:
        return None
    return divmod(action, vocab.NUM_VALUES)


def _state_space() -> spaces.Box:
    low = np.broadcast_to(_LOW, (vocab.NUM_OBJECTS, 6)).copy()
    high = np.broadcast_to(_HIGH, (vocab.NUM_OBJECTS, 6)).copy()
    return spaces.Box(low, high, shape=(vocab.NUM_OBJECTS, 6), dtype=np.int64)


def _presets() -> tuple[str, ...]:
    """The raster renderer's presets `preset` may name."""
    from tvr.trance.render.presets import PRESETS

    return tuple(PRESETS)


def _is_int(value: Any) -> bool:
    """An integer, not a bool (True is not the index 1), a float or a string of digits."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _image_size(size: Any) -> tuple[int, int]:
    if (not isinstance(size, (tuple, list)) or len(size) != 2
            or not all(_is_int(v) and v > 0 for v in size)):  # fmt: skip
        raise ValueError(f"image_size {size!r}: expected (width, height), two integers >= 1")
    return int(size[0]), int(size[1])


def _preset(preset: Any) -> str:
    presets = _presets()
    if preset not in presets:
        raise ValueError(f"unknown preset {preset!r}: expected one of {presets}")
    return str(preset)


def _max_steps(value: Any) -> int:
    if not _is_int(value) or value < 1:
        raise ValueError(f"max_steps {value!r}: expected an integer >= 1 (or None, the "
                         "setting's: 1 in Basic, 4 in Event and View)")  # fmt: skip
    return int(value)


def _check_samples_setting(samples: list[Sample], setting: str, where: str) -> None:
    """Samples of another setting are refused: Basic's have one step and no view, Event's no
    view (View samples carry their final view, `extra["view"]`)."""
    for i, s in enumerate(samples):
        problem = None
        if setting == "basic" and len(s.steps) != 1:
            problem = f"has {len(s.steps)} steps (a Basic sample has one)"
        elif setting != "view" and "view" in s.extra:
            problem = f"has a final view ({s.extra['view']!r}: a View sample)"
        if problem:
            raise ValueError(
                f"{where}: sample {i} ({s.id}) {problem}; not a {setting} sample, "
                f"use {ENV_IDS['view' if 'view' in s.extra else 'event']}"
            )


def _check_options(options: dict[str, Any], num_samples: int | None) -> None:
    unknown = sorted(set(options) - {"index", "sample"})
    if unknown:
        raise ValueError(f"reset options {unknown}: unknown; expected 'index' or 'sample'")
    i = options.get("index")
    if i is None:
        return
    if num_samples is None:
        raise ValueError("reset option 'index' needs a samples file (samples=...)")
    if not _is_int(i) or not 0 <= i < num_samples:
        raise ValueError(
            f"reset option 'index' {i!r}: expected an integer in 0..{num_samples - 1} "
            f"(the samples' indices)"
        )


_RENDERER: Any = None


def _renderer(preset: str) -> Any:
    """One raster renderer per process (the engine allows one), made on first use."""
    global _RENDERER
    if _RENDERER is None:
        from tvr.trance.render.images import make_renderer

        _RENDERER = make_renderer("raster", preset)
    return _RENDERER


class TranceEnv(gym.Env):
    """One TRANCE problem per episode; see the module docstring."""

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["rgb_array"], "render_fps": 4}

    def __init__(
        self,
        setting: str = "event",
        obs_mode: str = "symbolic",
        samples: str | Path | list[Sample] | None = None,
        reward_kind: str = "both",
        include_state: bool = False,
        image_size: tuple[int, int] = (160, 120),
        preset: str = "preview",
        max_steps: int | None = None,
        occlusion: bool = False,
        render_mode: str | None = None,
    ) -> None:
        if setting not in vocab.SETTINGS:
            raise ValueError(f"unknown setting {setting!r}: expected one of {vocab.SETTINGS}")
        if obs_mode not in OBS_MODES:
            raise ValueError(f"unknown obs_mode {obs_mode!r}: expected one of {OBS_MODES}")
        if reward_kind not in REWARDS:
            raise ValueError(f"unknown reward {reward_kind!r}: expected one of {REWARDS}")
        if render_mode not in (None, *self.metadata["render_modes"]):
            raise ValueError(f"unknown render_mode {render_mode!r}: expected None or one of "
                             f"{self.metadata['render_modes']}")  # fmt: skip
        self.setting = setting
        self.obs_mode = obs_mode
        self.reward_kind = reward_kind
        self.image_size = _image_size(image_size)  # width, height
        self.preset = _preset(preset)
        self.render_mode = render_mode
        default_steps = 1 if setting == "basic" else vocab.MAX_STEPS
        self.max_steps = default_steps if max_steps is None else _max_steps(max_steps)
        where = "samples"
        if isinstance(samples, (str, Path)):
            from tvr.trance.data.files import data_setting, read_samples

            found = data_setting(samples)
            if found is not None and found[0] != setting:
                raise ValueError(f"samples {samples}: {found[1]} names setting {found[0]!r}, "
                                 f"not this environment's {setting!r} ({ENV_IDS[found[0]]} "
                                 "reads it)")  # fmt: skip
            where = f"samples {samples}"
            samples = read_samples(samples)
        self.samples: list[Sample] | None = list(samples) if samples is not None else None
        if self.samples is not None and not self.samples:
            raise ValueError(f"{where}: holds no sample")
        if self.samples is not None:
            _check_samples_setting(self.samples, setting, where)
        from tvr.trance.sampling.sampler import SamplerConfig

        steps = 1 if setting == "basic" else vocab.MAX_STEPS
        self._sampler_config = SamplerConfig(min_steps=1, max_steps=steps, occlusion=occlusion)

        obs: dict[str, spaces.Space] = {}
        symbolic = obs_mode in ("symbolic", "both")
        if symbolic or include_state:
            obs["init_state"] = _state_space()
        if symbolic:
            obs["final_state"] = _state_space()
            obs["state"] = _state_space()
        if obs_mode in ("images", "both"):
            w, h = self.image_size
            img = spaces.Box(0, 255, shape=(h, w, 3), dtype=np.uint8)
            obs["init_image"] = img
            obs["final_image"] = img
        obs["step"] = spaces.Discrete(self.max_steps + 1)
        self.observation_space = spaces.Dict(obs)
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self.sample: Sample | None = None
        self._images: tuple[np.ndarray, np.ndarray] | None = None

    # --- episodes ---------------------------------------------------------------------------------
    def _draw_sample(self, options: dict[str, Any]) -> Sample:
        if self.samples is not None:
            i = options.get("index")
            if i is None:
                i = int(self.np_random.integers(len(self.samples)))
            return self.samples[int(i)]
        from tvr.trance.sampling.sampler import ShardSampler

        seed = int(self.np_random.integers(2**31 - 1))
        return ShardSampler(self._sampler_config, seed=seed, shard=0).sample(0)

    def _final_view(self, sample: Sample) -> str:
        if self.setting != "view":
            return "C"
        view = sample.extra.get("view")
        if view in vocab.VIEWS:
            return str(view)
        return vocab.VIEWS[int(self.np_random.integers(len(vocab.VIEWS)))]

    def _render_images(self, sample: Sample, view: str) -> tuple[np.ndarray, np.ndarray]:
        import dataclasses

        from tvr.trance.render.scene import sample_views

        w, h = self.image_size
        views = dict(zip(vocab.IMAGE_SLOTS, sample_views(sample), strict=True))
        out = []
        for slot in (("init", "C"), ("fin", view)):
            desc = dataclasses.replace(views[slot][1], width=w, height=h)
            img, _ = _renderer(self.preset).render(desc, image=True)
            out.append(np.ascontiguousarray(img, dtype=np.uint8))
        return out[0], out[1]

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        super().reset(seed=seed)
        options = options or {}
        _check_options(options, None if self.samples is None else len(self.samples))
        sample = options.get("sample") or self._draw_sample(options)
        self.sample = sample
        self.view = self._final_view(sample)
        self._init = sample.initial_array.astype(np.int64)
        self._final = sample.final_array.astype(np.int64)
        self._state = self._init.copy()
        self._objs: list[int] = []
        self._values: list[int] = []
        self._images = None
        self._done = False
        if self.obs_mode != "symbolic":
            self._images = self._render_images(sample, self.view)
        info = {"sample_id": sample.id, "view": self.view, "num_steps": len(sample.steps)}
        return self._obs(), info

    def _obs(self) -> dict[str, Any]:
        keys = self.observation_space.spaces
        obs: dict[str, Any] = {}
        if "init_state" in keys:
            obs["init_state"] = self._init.copy()
        if "final_state" in keys:
            obs["final_state"] = self._final.copy()
            obs["state"] = self._state.copy()
        if self._images is not None:
            obs["init_image"], obs["final_image"] = (im.copy() for im in self._images)
        obs["step"] = len(self._objs)
        return obs

    def scores(self) -> tuple[float, dict[str, Any]]:
        """The reward of the steps taken so far, as REINFORCE computes it, and its scores."""
        if self.sample is None:
            raise ResetNeeded("call reset() before scores()")
        n = max(len(self._objs), 1)
        objs = np.full((1, n), -1, dtype=np.int64)
        values = np.full((1, n), world.PAD_VALUE, dtype=np.int64)
        objs[0, : len(self._objs)] = self._objs
        values[0, : len(self._values)] = self._values
        s = event_scores(
            self._init[None], self._final[None], objs, values, np.array([len(self.sample.steps)])
        )
        if self.setting == "basic":
            ref = self.sample.steps[0]
            options = np.zeros((1, vocab.NUM_VALUES), dtype=bool)
            options[0, list(ref.accepted)] = True
            if self._objs:
                b = basic_scores(np.array(self._objs[:1]), np.array(self._values[:1]),
                                 np.array([ref.obj]), options)  # fmt: skip
                s.correct = b.correct
            else:
                s.correct = np.zeros(1, dtype=bool)
        r = float(reward(self.reward_kind, s)[0])
        return r, {
            "correct": bool(s.correct[0]),
            "distance": int(s.distance[0]),
            "norm_distance": float(s.norm_distance[0]),
        }

    def step(self, action: Any) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        if self.sample is None:
            raise ResetNeeded("Cannot call env.step() before calling env.reset()")
        if self._done:
            raise ResetNeeded("the episode has ended (terminated=True); call env.reset() before "
                              "env.step()")  # fmt: skip
        if not _is_int(action) or not self.action_space.contains(int(action)):
            raise ValueError(f"action {action!r}: expected an integer in 0..{STOP} (obj * "
                             f"{vocab.NUM_VALUES} + value, {STOP} = stop)")  # fmt: skip
        decoded = decode_action(int(action))
        info: dict[str, Any] = {"broken_rule": None, "noop": False}
        if decoded is not None:
            obj, value = decoded
            self._state, result = world.apply_step(self._state, obj, value)
            self._objs.append(obj)
            self._values.append(value)
            info["broken_rule"] = result.broken_rule
            info["noop"] = result.noop
        done = decoded is None or len(self._objs) >= self.max_steps
        r = 0.0
        if done:
            self._done = True
            r, end = self.scores()
            info.update(end, sample_id=self.sample.id)
        return self._obs(), r, done, False, info

    def render(self) -> np.ndarray | None:
        """rgb_array: the initial and final images side by side."""
        if self.render_mode != "rgb_array" or self.sample is None:
            return None
        images = self._images or self._render_images(self.sample, self.view)
        return np.concatenate(images, axis=1)


def register_envs() -> None:
    """Register the three environments with Gymnasium; again is harmless. Importing this module
    does it, so `gymnasium.make("tvr/TRANCE-Event-v0")` works after `import tvr.trance.env`, and
    `gymnasium.make("tvr.trance.env:tvr/TRANCE-Event-v0")` imports the module itself. (Gymnasium
    1.x reads no entry points, so there is nothing to declare in pyproject.toml.)"""
    for setting, env_id in ENV_IDS.items():
        if env_id not in gym.registry:
            gym.register(
                id=env_id, entry_point=f"{__name__}:TranceEnv", kwargs={"setting": setting}
            )


register_envs()
