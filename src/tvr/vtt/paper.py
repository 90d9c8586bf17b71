"""The published VTT numbers that `tvr vtt stats` and `tvr vtt evaluate` print beside ours.

Source: "Visual Transformation Telling" (the VTT paper: W. Cui, X. Hong et al., arXiv:2305.01928;
the numbers as printed in its ICLR 2025 submission): Table 1 (dataset statistics) and Table 2
(results on the test set; B@4, METEOR, ROUGE-L, CIDEr, SPICE, BERTScore, x100, as printed; the
human ratings are left out here).
"""

from __future__ import annotations

PAPER = "Visual Transformation Telling (VTT paper)"
TABLE1_SOURCE = f"{PAPER}, Table 1"
TABLE2_SOURCE = f"{PAPER}, Table 2"

#: the metrics of Table 2, in its column order: key -> the column's name in the paper
METRICS: dict[str, str] = {
    "BLEU_4": "B@4",
    "METEOR": "M",
    "ROUGE_L": "R",
    "CIDEr": "C",
    "SPICE": "S",
    "BERTScore": "BS",
}

#: Table 1: column -> statistic -> value; "CrossTask"/"COIN" are the records' ori "cross"/"coin"
TABLE1: dict[str, dict[str, int]] = {
    "CrossTask": {"categories": 4, "topics": 18, "samples": 1825, "states": 12860,
                  "transformations": 11035, "unique_transformations": 105},
    "COIN": {"categories": 12, "topics": 180, "samples": 11722, "states": 56169,
             "transformations": 44447, "unique_transformations": 749},
    "train": {"categories": 12, "topics": 198, "samples": 10759, "states": 54716,
              "transformations": 43957, "unique_transformations": 853},
    "val": {"categories": 12, "topics": 198, "samples": 1352, "states": 6974,
            "transformations": 5622, "unique_transformations": 812},
    "test": {"categories": 12, "topics": 198, "samples": 1436, "states": 7339,
             "transformations": 5903, "unique_transformations": 806},
    "total": {"categories": 12, "topics": 198, "samples": 13547, "states": 69029,
              "transformations": 55482, "unique_transformations": 853},
}  # fmt: skip

#: Table 2's automatic metrics: model -> (B@4, M, R, C, S, BS)
TABLE2: dict[str, tuple[float, float, float, float, float, float]] = {
    "Human": (11.79, 13.66, 29.49, 82.26, 24.41, 40.95),
    "CST": (10.09, 11.39, 25.98, 43.22, 9.28, 16.30),
    "CST*": (13.96, 19.21, 38.11, 84.60, 21.85, 25.66),
    "GLACNet": (42.77, 45.26, 52.98, 381.48, 45.33, 60.12),
    "GLACNet*": (55.24, 59.48, 66.25, 508.18, 60.21, 71.13),
    "DenseCap*": (48.25, 52.00, 59.79, 439.68, 53.73, 66.30),
    "GPT-4": (4.73, 6.74, 11.76, 28.24, 11.66, 25.84),
    "GPT-4o": (4.84, 6.91, 12.03, 29.69, 13.01, 28.38),
    "Gemini-1.0": (8.36, 10.25, 19.82, 47.79, 16.13, 31.43),
    "Gemini-1.5": (8.51, 11.1, 20.62, 52.25, 17.93, 33.88),
    "Gemini-1.5 (multiturn)": (8.20, 9.91, 19.87, 42.69, 16.47, 31.08),
    "Qwen-VL-chat": (4.71, 4.57, 10.62, 15.32, 6.25, 23.93),
    "Qwen-VL-chat (Sep)": (4.70, 5.62, 11.23, 21.91, 9.38, 25.64),
    "LLaVA-1.5-7B": (3.06, 3.30, 7.19, 12.04, 5.18, 23.21),
    "LLaVA-1.5-7B+Topic": (3.14, 3.46, 7.56, 12.49, 5.95, 23.76),
    "LLaVA-1.5-7B LORA": (31.43, 32.37, 40.38, 268.59, 33.17, 49.08),
    "LLaVA-1.5-7B LORA+Topic": (33.58, 34.25, 41.93, 289.14, 35.29, 50.46),
    "TTNet_Base": (55.68, 60.47, 67.05, 515.12, 61.45, 72.22),
    "TTNet": (61.22, 66.31, 71.84, 570.63, 66.20, 76.25),
}

#: the rows printed beside ours: the best model, the classic baseline, the best MLLM, people
ANCHORS: tuple[str, ...] = ("TTNet", "GLACNet*", "Gemini-1.5", "Human")


def table2_row(model: str) -> dict[str, float]:
    """One model's Table 2 metrics keyed like METRICS."""
    return dict(zip(METRICS, TABLE2[model], strict=True))
