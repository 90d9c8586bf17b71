"""The published CLEVRER results that `tvr clevrer evaluate` prints beside ours (as printed, %).

Sources:
- K. Yi, C. Gan, Y. Li, P. Kohli, J. Wu, A. Torralba, J. B. Tenenbaum, "CLEVRER: Collision
  Events for Video Representation and Reasoning", ICLR 2020: Table 2 (the baselines) and
  Table 3 (NS-DR and NS-DR without events). The paper calls the numbers "F1-score"; they are
  accuracies (its section 4.2 defines them as the share of right answers, resp. options and
  questions), on the test set.
- Later work, each from its own paper (its CLEVRER test results): DCL (Z. Chen, J. Mao, J. Wu,
  K.-Y. K. Wong, J. B. Tenenbaum, C. Gan, "Grounding Physical Concepts of Objects and Events
  Through Dynamic Visual Reasoning", ICLR 2021, openreview.net/forum?id=bhCDO_cEGCz) and VRDP
  (M. Ding, Z. Chen, T. Du, P. Luo, J. B. Tenenbaum, C. Gan, "Dynamic Visual Reasoning by
  Learning Differentiable Physics Models from Video and Language", NeurIPS 2021,
  arXiv:2110.15358).
"""

from __future__ import annotations

from dataclasses import dataclass

PAPER = "Yi et al., CLEVRER, ICLR 2020"

#: the columns of the table: descriptive, then (per option, per question) of each choice type
COLUMNS: tuple[str, ...] = (
    "descriptive",
    "explanatory_per_option", "explanatory_per_question",
    "predictive_per_option", "predictive_per_question",
    "counterfactual_per_option", "counterfactual_per_question",
)  # fmt: skip


@dataclass(frozen=True)
class PublishedRow:
    """One model's published accuracies (%), in COLUMNS order, and where they are printed."""

    model: str
    values: tuple[float, float, float, float, float, float, float]
    source: str

    def as_dict(self) -> dict[str, float]:
        return dict(zip(COLUMNS, self.values, strict=True))


_T2 = f"{PAPER}, Table 2"
_T3 = f"{PAPER}, Table 3"

TABLE2: tuple[PublishedRow, ...] = (
    PublishedRow("Q-type (random)", (29.2, 50.1, 8.1, 50.7, 25.5, 50.1, 10.3), _T2),
    PublishedRow("Q-type (frequent)", (33.0, 50.2, 16.5, 50.0, 0.0, 50.2, 1.0), _T2),
    PublishedRow("LSTM", (34.7, 59.7, 13.6, 50.6, 23.2, 53.8, 3.1), _T2),
    PublishedRow("CNN+MLP", (48.4, 54.9, 18.3, 50.5, 13.2, 55.2, 9.0), _T2),
    PublishedRow("CNN+LSTM", (51.8, 62.0, 17.5, 57.9, 31.6, 61.2, 14.7), _T2),
    PublishedRow("TVQA+", (72.0, 63.3, 23.7, 70.3, 48.9, 53.9, 4.1), _T2),
    PublishedRow("Memory", (54.7, 53.7, 13.9, 50.0, 33.1, 54.2, 7.0), _T2),
    PublishedRow("IEP (V)", (52.8, 52.6, 14.5, 50.0, 9.7, 53.4, 3.8), _T2),
    PublishedRow("TbD-net (V)", (79.5, 61.6, 3.8, 50.3, 6.5, 56.1, 4.4), _T2),
    PublishedRow("MAC (V)", (85.6, 59.5, 12.5, 51.0, 16.5, 54.6, 13.7), _T2),
    PublishedRow("MAC (V+)", (86.4, 70.5, 22.3, 59.7, 42.9, 63.5, 25.1), _T2),
)

TABLE3: tuple[PublishedRow, ...] = (
    PublishedRow("NS-DR", (88.1, 87.6, 79.6, 82.9, 68.7, 74.1, 42.2), _T3),
    PublishedRow("NS-DR (NE)", (85.8, 85.9, 74.3, 75.4, 54.1, 76.1, 42.0), _T3),
)

LATER: tuple[PublishedRow, ...] = (
    PublishedRow("DCL", (90.7, 89.6, 82.8, 90.5, 82.0, 80.4, 46.5),
                 "Chen et al., DCL, ICLR 2021 (openreview.net/forum?id=bhCDO_cEGCz)"),
    PublishedRow("VRDP", (93.4, 96.3, 91.9, 95.7, 91.4, 94.8, 84.3),
                 "Ding et al., VRDP, NeurIPS 2021 (arXiv:2110.15358)"),
)  # fmt: skip

#: every published row, in the order printed
PUBLISHED: tuple[PublishedRow, ...] = TABLE2 + TABLE3 + LATER


def published(model: str) -> PublishedRow:
    """The published row of `model` (its name as above)."""
    for row in PUBLISHED:
        if row.model == model:
            return row
    raise KeyError(model)
