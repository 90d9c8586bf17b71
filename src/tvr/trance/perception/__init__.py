"""The TRANCE scene parser: objects, attributes and grid positions from images (the solver's
perception; `tvr trance parser train|predict`).

- `model`: the network (centre heatmap, offset, size/colour/material/shape logits) and decoding.
- `geometry`: image to floor and back through the camera.
- `labels`: per-image labels from the scene JSON and the raster renderer's masks.
- `data`, `config`, `module`, `train`: training on a `tvr generate` dataset (shared run engine).
- `metrics`: per-attribute accuracy, position error, missed and extra objects.
- `predict`: a trained parser, scoring a split, its parses as rows (the solver's perception
  over images is `tvr.trance.solver.images`).
"""
