"""The TRANCE world: vocabulary and constants, the simulator f(S, t), cameras, occlusion."""

from tvr._moved import forwarding_getattr

# `tvr.trance.world` was the simulator module: its names resolve here for one release
__getattr__ = forwarding_getattr(__name__, "tvr.trance.world", "tvr.trance.world.simulator")
