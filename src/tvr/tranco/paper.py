"""The published TRANCO numbers (Tables 2, 6 and 7) that tvr prints beside ours, as printed.

Source: X. Hong, Y. Lan, L. Pang, J. Guo, X. Cheng, "Visual Reasoning: from State to
Transformation" (the journal version of "Transformation Driven Visual Reasoning", on TRANCE and
TRANCO):

- Table 2 (section 5.1): videos and clips per split, and videos with k = 2..7 clips.
- Table 6 (section 8.1): the random baseline and four TrancoNets on the test set, with tiny
  candidates (100 per sample, metrics suffixed @100) and with the full candidates (all 4,918 test
  clips). R and P are Recall and Precision as the paper computed them; `tvr.tranco.eval.metrics`
  explains the two readings of its Eq. 2, and `benchmarks/tranco_random_baseline.py` shows which
  one the random row follows.
- Table 7 (section 8.2): ViT-B/32-T trained from scratch, with CLIP frozen, and fine-tuned.
- Fig. 9 (EMR@100 per number of steps) gives its numbers only as a plot; the text says models
  answer about half of the 2-step samples and none above 4 steps. No number of it is here.
"""

from __future__ import annotations

from dataclasses import dataclass

PAPER = "Hong et al., Visual Reasoning: from State to Transformation (TVR journal paper)"

#: Table 6's columns, in its order (R and P as the paper computed them)
METRICS: tuple[str, ...] = ("R", "P", "KTD", "SD", "NSD", "EMR")

#: the candidate settings of Table 6: tiny (100 per sample) and full (all test clips)
SETTINGS: tuple[str, ...] = ("tiny", "full")

#: Table 2: split -> (videos, clips, {k: videos with k clips})
TABLE2: dict[str, tuple[int, int, dict[int, int]]] = {
    "train": (8651, 30244, {2: 2451, 3: 2497, 4: 1874, 5: 947, 6: 554, 7: 328}),
    "val": (1024, 3616, {2: 283, 3: 291, 4: 235, 5: 96, 6: 76, 7: 43}),
    "test": (1430, 4918, {2: 432, 3: 425, 4: 279, 5: 154, 6: 87, 7: 53}),
    "total": (11105, 38778, {2: 3166, 3: 3213, 4: 2388, 5: 1197, 6: 717, 7: 424}),
}

#: the tiny candidate set's size (section 8) and the full one's (all test clips, Table 2)
TINY_CANDIDATES = 100
FULL_CANDIDATES = TABLE2["test"][1]


@dataclass(frozen=True)
class PublishedRow:
    """One model's Table 6 values, in METRICS order, for the tiny and the full candidates."""

    model: str
    tiny: tuple[float, float, float, float, float, float]
    full: tuple[float, float, float, float, float, float]
    source: str = f"{PAPER}, Table 6"

    def values(self, setting: str) -> dict[str, float]:
        """metric -> value for setting "tiny" or "full"."""
        row = {"tiny": self.tiny, "full": self.full}[setting]
        return dict(zip(METRICS, row, strict=True))


TABLE6: tuple[PublishedRow, ...] = (
    PublishedRow("Random", (0.0316, 0.0409, 0.9958, 1.9364, 0.6845, 0.0000),
                 (0.0005, 0.0006, 1.0000, 1.9888, 0.7093, 0.0000)),
    PublishedRow("RN101-G", (0.5733, 0.8633, 0.4540, 1.5503, 0.4002, 0.1524),
                 (0.3374, 0.4865, 0.7489, 1.8147, 0.5509, 0.0490)),
    PublishedRow("ViT-B/32-T", (0.7549, 0.8434, 0.2981, 1.4154, 0.4248, 0.1986),
                 (0.4890, 0.5205, 0.5982, 1.7399, 0.5709, 0.0881)),
    PublishedRow("ViT-B/16-T", (0.7416, 0.8420, 0.2912, 1.4413, 0.4343, 0.1860),
                 (0.4883, 0.5394, 0.5933, 1.6007, 0.5148, 0.0811)),
    PublishedRow("RN101-T", (0.7188, 0.8620, 0.2545, 1.1154, 0.2908, 0.2161),
                 (0.4598, 0.5006, 0.5865, 1.2832, 0.3976, 0.0727)),
)  # fmt: skip

#: Table 7: ViT-B/32-T's pre-training strategy -> (EMR@100, EMR with the full candidates)
TABLE7: dict[str, tuple[float, float]] = {
    "from scratch": (0.1210, 0.0378),
    "pretrain w/o finetune": (0.1986, 0.0881),
    "pretrain w/ finetune": (0.1965, 0.0748),
}
TABLE7_SOURCE = f"{PAPER}, Table 7 (ViT-B/32-T)"


def random_row() -> PublishedRow:
    """Table 6's random baseline."""
    return TABLE6[0]
