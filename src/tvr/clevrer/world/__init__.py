"""CLEVRER's world: vocabulary, scene sampling, pybullet physics, events and the causal graph."""
