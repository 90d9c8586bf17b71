"""The TRANCE world: vocabulary and constants, the simulator f(S, t), cameras, occlusion."""
