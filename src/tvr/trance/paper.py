"""The published TRANCE numbers that `tvr results` prints beside ours (facts, copied as printed).

Source: X. Hong, Y. Lan, L. Pang, J. Guo, X. Cheng, "Transformation Driven Visual Reasoning"
(the journal version on TRANCE and TRANCO), section 7:

- Table 3: model and human performance on Basic, Event and View; ΔAcc = View Acc - Event Acc.
- Table 4: ResNet₋-T fine-tuned with REINFORCE and three rewards, on Event.
- Table 5: results on the order-sensitive samples of Event (6.2% of the test set).
- Fig. 7 (Acc per number of steps, Event) and Fig. 8 (Acc per final view, View) give their
  numbers only as plots; the text states one series: CNN₋-G scores 92%, 55%, 23% and 8% on
  1-, 2-, 3- and 4-step samples. Only that series is here.

Keys are the canonical model names of `tvr.trance.models.registry` ("cnn--g", ...) and "human".
"""

from __future__ import annotations

from typing import Any

PAPER = "TVR journal paper (Hong et al., TRANCE/TRANCO), section 7"

BASIC_COLUMNS = ("ObjAcc", "AttrAcc", "ValAcc", "Acc")
SEQUENCE_COLUMNS = ("AD", "AND", "LAcc", "Acc")

#: Table 3: model -> setting -> metric -> value (None where the paper prints "-")
TABLE3: dict[str, dict[str, dict[str, float] | None]] = {
    "cnn--g": {
        "basic": {"ObjAcc": 0.9596, "AttrAcc": 0.9954, "ValAcc": 0.9834, "Acc": 0.9440},
        "event": {"AD": 1.5842, "AND": 0.5217, "LAcc": 0.4568, "Acc": 0.4419},
        "view": {"AD": 2.2649, "AND": 0.8851, "LAcc": 0.2376, "Acc": 0.2300},
    },
    "cnn+-g": {
        "basic": {"ObjAcc": 0.9570, "AttrAcc": 0.9942, "ValAcc": 0.9798, "Acc": 0.9390},
        "event": {"AD": 1.4416, "AND": 0.4725, "LAcc": 0.4961, "Acc": 0.4797},
        "view": {"AD": 2.0671, "AND": 0.7887, "LAcc": 0.2889, "Acc": 0.2789},
    },
    "bcnn-g": {
        "basic": {"ObjAcc": 0.9684, "AttrAcc": 0.9946, "ValAcc": 0.9818, "Acc": 0.9524},
        "event": {"AD": 1.1299, "AND": 0.3623, "LAcc": 0.5847, "Acc": 0.5610},
        "view": {"AD": 1.2915, "AND": 0.4437, "LAcc": 0.4977, "Acc": 0.4749},
    },
    "duda-g": {
        "basic": {"ObjAcc": 0.9534, "AttrAcc": 0.9922, "ValAcc": 0.9838, "Acc": 0.9394},
        "event": {"AD": 1.3184, "AND": 0.4170, "LAcc": 0.5612, "Acc": 0.5401},
        "view": {"AD": 1.4943, "AND": 0.5130, "LAcc": 0.4837, "Acc": 0.4645},
    },
    "resnet--g": {
        "basic": {"ObjAcc": 0.9808, "AttrAcc": 0.9982, "ValAcc": 0.9934, "Acc": 0.9744},
        "event": {"AD": 1.0072, "AND": 0.3108, "LAcc": 0.6350, "Acc": 0.6057},
        "view": {"AD": 1.0552, "AND": 0.3564, "LAcc": 0.5704, "Acc": 0.5454},
    },
    "resnet+-g": {
        "basic": {"ObjAcc": 0.9856, "AttrAcc": 0.9980, "ValAcc": 0.9954, "Acc": 0.9814},
        "event": {"AD": 1.0624, "AND": 0.3336, "LAcc": 0.6217, "Acc": 0.5932},
        "view": {"AD": 1.1353, "AND": 0.3760, "LAcc": 0.5681, "Acc": 0.5426},
    },
    "resnet--t": {
        "basic": None,
        "event": {"AD": 0.8389, "AND": 0.2601, "LAcc": 0.6865, "Acc": 0.6553},
        "view": {"AD": 0.8832, "AND": 0.2933, "LAcc": 0.6324, "Acc": 0.6012},
    },
    "resnet+-t": {
        "basic": None,
        "event": {"AD": 0.8873, "AND": 0.2777, "LAcc": 0.6743, "Acc": 0.6424},
        "view": {"AD": 0.9260, "AND": 0.3084, "LAcc": 0.6243, "Acc": 0.5927},
    },
    "human": {
        "basic": {"ObjAcc": 1.0000, "AttrAcc": 1.0000, "ValAcc": 1.0000, "Acc": 1.0000},
        "event": {"AD": 0.3700, "AND": 0.1200, "LAcc": 0.8300, "Acc": 0.8300},
        "view": {"AD": 0.3200, "AND": 0.0986, "LAcc": 0.8433, "Acc": 0.8433},
    },
}

#: Table 3's last column, as printed: View Acc - Event Acc of the unrounded numbers, so it may
#: differ by 0.0001 from the difference of the printed Accs (ResNet⊕-G: -0.0507, not -0.0506)
TABLE3_DELTA_ACC: dict[str, float] = {
    "cnn--g": -0.2119,
    "cnn+-g": -0.2008,
    "bcnn-g": -0.0861,
    "duda-g": -0.0756,
    "resnet--g": -0.0603,
    "resnet+-g": -0.0507,
    "resnet--t": -0.0541,
    "resnet+-t": -0.0497,
    "human": 0.0133,
}

#: Table 4: ResNet₋-T on Event, then fine-tuned with REINFORCE; reward -> metrics
#: (None: the base model; "corr", "dist", "both" as in TrainConfig.reward)
TABLE4_MODEL = "resnet--t"
TABLE4: dict[str | None, dict[str, float]] = {
    None: {"AD": 0.8389, "AND": 0.2601, "LAcc": 0.6865, "Acc": 0.6553},
    "corr": {"AD": 0.7711, "AND": 0.2367, "LAcc": 0.7061, "Acc": 0.6729},
    "dist": {"AD": 0.7741, "AND": 0.2370, "LAcc": 0.7065, "Acc": 0.6734},
    "both": {"AD": 0.7681, "AND": 0.2354, "LAcc": 0.7069, "Acc": 0.6740},
}

#: Table 5: the order-sensitive samples of Event, 6.2% of the test set
TABLE5_SHARE = 0.062
TABLE5: dict[str, dict[str, float]] = {
    "cnn+-g": {"LAcc": 0.1540, "Acc": 0.1395, "EO": 0.0942},
    "duda-g": {"LAcc": 0.1944, "Acc": 0.1613, "EO": 0.1701},
    "bcnn-g": {"LAcc": 0.2339, "Acc": 0.1935, "EO": 0.1724},
    "resnet+-g": {"LAcc": 0.3226, "Acc": 0.2565, "EO": 0.2050},
    "resnet+-t": {"LAcc": 0.3556, "Acc": 0.2911, "EO": 0.1814},
    "human": {"LAcc": 0.7273, "Acc": 0.7273, "EO": 0.0000},
}
#: Table 5's first row: the reference steps randomly permuted, mean of 100 runs on 100
#: order-sensitive samples (an upper bound of the order error, not a model)
TABLE5_RANDOM_ORDER = {"LAcc": 1.0000, "Acc": 0.4992, "EO": 0.5008}

#: Fig. 7's only numbers given in the text: Acc of CNN₋-G on 1-, 2-, 3-, 4-step Event samples
FIG7_ACC_BY_STEPS: dict[str, dict[str, float]] = {
    "cnn--g": {"1": 0.92, "2": 0.55, "3": 0.23, "4": 0.08},
}

#: Fig. 8 (Acc per final view) gives no numbers in the text: nothing to compare with
FIG8_ACC_BY_VIEW: dict[str, dict[str, float]] = {}


def paper_metrics(model: str, setting: str) -> dict[str, Any] | None:
    """Table 3's metrics of a canonical model name (or "human") in a setting; None if absent."""
    return (TABLE3.get(model) or {}).get(setting)


# --- balance (tvr stats, tvr report) ---
#: Table 8 of the journal paper (the 500,000 Event/View training samples of TRANCE)
PAPER_TABLE8: dict[str, dict[str, float]] = {
    "1-gram": {"options": 33, "min": 38635, "max": 38638, "median": 38636, "mean": 38636, "std": 0.7714},
    "2-gram": {"options": 1089, "min": 697, "max": 708, "median": 703, "mean": 702.5, "std": 2.2854},
    "3-gram": {"options": 35937, "min": 7, "max": 15, "median": 11, "mean": 10.64, "std": 0.7880},
    "4-gram": {"options": 1185921, "min": 0, "max": 3, "median": 0, "mean": 0.1075, "std": 0.3150},
}  # fmt: skip
PAPER_TABLE8_SAMPLES = 500_000

#: shares of order-sensitive samples the papers report (Event test sets)
PAPER_ORDER_SENSITIVE: dict[str, float] = {
    "journal paper (Tab. 5, Event test set)": 0.062,
    "CVPR paper (Tab. 4, Event test set)": 0.078,
}
