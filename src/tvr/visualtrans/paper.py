"""The published VisualTrans numbers that `tvr vlm report` prints beside ours, as printed.

Source: the VisualTrans paper, Table 2 (accuracy in percent on the 497 test items; the columns
Fine, Global, Spatial (mean), Interm., Causal, Plan, Procedural (mean), Count, Quantitative
(mean), Overall). All 17 rows: the five proprietary models and the twelve open-source ones.
"""

from __future__ import annotations

PAPER = "VisualTrans paper, Table 2"

#: Table 2's columns, in its order
COLUMNS: tuple[str, ...] = ("Fine", "Global", "Spatial", "Interm.", "Causal", "Plan",
                            "Procedural", "Count", "Quantitative", "Overall")  # fmt: skip

#: Table 2's 17 rows, best Overall first (ties in the paper's order). The paper prints nine numbers
#: a row (Quant.'s mean is its only subtask, Count, so Quantitative repeats Count); "-" (the model
#: does not take the input format of Interm.) is None.
TABLE2: dict[str, tuple[float | None, ...]] = {
    "o3": (58.33, 84.00, 71.17, 23.86, 62.79, 78.57, 55.07, 79.37, 79.37, 59.96),
    "Gemini-2.5-Pro": (48.21, 48.00, 48.11, 54.55, 55.81, 78.57, 62.98, 61.90, 61.90, 54.93),
    "GPT-4.1": (51.79, 38.00, 44.90, 27.27, 29.07, 59.52, 38.62, 65.08, 65.08, 44.47),
    "Claude-3.7-Sonnet": (44.05, 52.00, 48.03, 21.59, 55.81, 57.14, 44.85, 47.62, 47.62, 44.47),
    "GPT-4o-2024-11-20": (30.36, 30.00, 30.18, 31.82, 36.05, 45.24, 37.70, 57.14, 57.14, 36.22),
    "InternVL3-78B": (26.79, 42.00, 34.40, 28.41, 33.72, 50.00, 37.38, 52.38, 52.38, 35.01),
    "GLM-4.1V-9B-Thinking": (29.76, 32.00, 30.88, 28.41, 29.07, 42.86, 33.45, 47.62, 47.62, 33.00),
    "Llama-4-Maverick": (31.55, 44.00, 37.78, 19.32, 26.74, 50.00, 32.02, 39.68, 39.68, 32.39),
    "Qwen2.5-VL-32B": (23.21, 14.00, 18.61, 23.86, 36.05, 45.24, 35.05, 44.44, 44.44, 29.18),
    "Qwen2.5-VL-72B": (22.02, 26.00, 24.01, 26.14, 30.23, 33.33, 29.90, 46.03, 46.03, 28.57),
    "InternVL3-14B": (18.45, 42.00, 30.23, 26.14, 24.42, 45.24, 31.93, 42.86, 42.86, 28.57),
    "Pixtral-Large": (20.24, 28.00, 24.12, 19.32, 29.07, 42.86, 30.42, 30.16, 30.16, 25.55),
    "Kimi-VL-A3B-Thinking": (20.24, 40.00, 30.12, 20.45, 32.56, 30.95, 27.99, 20.63, 20.63, 25.35),
    "Pixtral-12B": (19.05, 32.00, 25.53, 18.18, 22.09, 28.57, 22.95, 30.16, 30.16, 22.94),
    "Qwen2.5-VL-7B": (17.86, 24.00, 20.93, None, 26.74, 26.19, 26.47, 36.51, 36.51, 19.92),
    "Llama-3.2-11b-Vision-Instruct": (12.50, 24.00, 18.25, 19.32, 26.74, 23.81, 23.29, 14.29,
                                      14.29, 18.51),
    "Phi-4-Multimodal-Instruct": (19.05, 20.00, 19.53, None, 32.56, 14.29, 23.43, 23.81, 23.81,
                                  18.31),
}  # fmt: skip


def table2_row(model: str) -> dict[str, float | None]:
    """One model's Table 2 row keyed like COLUMNS."""
    return dict(zip(COLUMNS, TABLE2[model], strict=True))
