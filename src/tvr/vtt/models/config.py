"""The VTT models' configuration: which model, its sizes and switches, the named presets and the
named weights of the auxiliary losses.

Models: "ttnet" (Diff, MTM and Aux on unless switched off: the ablations), "ttnet-base" (all
three off: TTNet_Base of the paper) and "glacnet" (GLACNet* of the paper: CLIP features, bi-LSTM,
glocal vectors, LSTM decoder).

Aux weights (L = w_text L_text + w_category L_category + w_topic L_topic):
- "paper": appendix E.1, alpha = 0.025 for the category, beta = 0.1 for the topic, text 1;
- "released": the official code's final configuration (conf/experiment/sota_v5_final.yaml of
  github.com/hughplay/VTT: TellingLossV1 with w_generate 1, w_classify 0.25, and inside the
  classification loss w_category 0.1, w_topic 1; each level is a weighted mean, so
  L = (L_text + 0.25 (0.1 L_cat + L_topic) / 1.1) / 1.25).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MODELS = ("ttnet", "ttnet-base", "glacnet")
VOCABS = ("clip", "train")

#: name -> (w_text, w_category, w_topic)
AUX_WEIGHTS: dict[str, tuple[float, float, float]] = {
    "paper": (1.0, 0.025, 0.1),
    "released": (1.0 / 1.25, 0.25 * 0.1 / 1.1 / 1.25, 0.25 * 1.0 / 1.1 / 1.25),
}

#: size presets: the paper's (ViT-L/14, width 512, 8 heads) and a tiny one for CPU runs and tests
PRESETS: dict[str, dict[str, Any]] = {
    "paper": {"encoder": "ViT-L-14", "dim": 512, "heads": 8},
    "tiny": {"encoder": "tvr-tiny", "dim": 64, "heads": 4},
}


@dataclass(frozen=True)
class ModelConfig:
    """Everything a VTT model's architecture depends on.

    Args:
        model: one of MODELS.
        encoder, encoder_weights, encoder_seed: the CLIP image encoder (models.encoder).
        freeze_encoder: keep the encoder's weights fixed (the paper; its features are cached).
        dim: width of state features, contexts and word embeddings (512 in the paper).
        heads, context_layers, decoder_layers, dropout: the transformers (8, 2, 2, 0.1).
        max_tokens: longest description in CLIP BPE ids, start and end included (24).
        vocab: "clip", the decoder reads and predicts all 49,408 CLIP ids (the paper); or
            "train", only the ids of the training descriptions (a CPU speed-up, not the
            paper's: the output layer is the bulk of a small model's work).
        diff, mtm, aux: TTNet's three parts (off for ttnet-base; not for glacnet).
        mtm_ratio, mtm_prob: MTM zeroes each state/difference feature with probability
            mtm_ratio, in a sample chosen with probability mtm_prob (0.15, 0.5).
        aux_weights: a name of AUX_WEIGHTS.
        lstm_layers, lstm_dropout, embed_dropout: GLACNet's LSTMs (2, 0.5, 0.1).
        cascade: GLACNet's cascading: each description's decoder starts from the hidden state
            the previous one ended with (the GLACNet paper and code; the VTT re-implementation
            starts every description afresh: cascade False).
    """

    model: str = "ttnet"
    encoder: str = "ViT-L-14"
    encoder_weights: str | None = None
    encoder_seed: int = 0
    freeze_encoder: bool = True
    dim: int = 512
    heads: int = 8
    context_layers: int = 2
    decoder_layers: int = 2
    dropout: float = 0.1
    max_tokens: int = 24
    vocab: str = "clip"
    diff: bool = True
    mtm: bool = True
    aux: bool = True
    mtm_ratio: float = 0.15
    mtm_prob: float = 0.5
    aux_weights: str = "paper"
    lstm_layers: int = 2
    lstm_dropout: float = 0.5
    embed_dropout: float = 0.1
    cascade: bool = True

    def __post_init__(self) -> None:
        if self.model not in MODELS:
            raise ValueError(f"unknown model {self.model!r}: one of {', '.join(MODELS)}")
        if self.aux_weights not in AUX_WEIGHTS:
            raise ValueError(f"unknown aux_weights {self.aux_weights!r}: one of "
                             f"{', '.join(AUX_WEIGHTS)}")  # fmt: skip
        if self.model != "ttnet" and (self.diff or self.mtm or self.aux):
            raise ValueError(f"{self.model} has no Diff, MTM or Aux (they are TTNet's parts); "
                             "set diff, mtm and aux to false")  # fmt: skip
        if self.vocab not in VOCABS:
            raise ValueError(f"unknown vocab {self.vocab!r}: one of {', '.join(VOCABS)}")
        if self.max_tokens < 3:
            raise ValueError(f"max_tokens must be 3 or more, not {self.max_tokens}")
        if not 0 <= self.mtm_ratio <= 1 or not 0 <= self.mtm_prob <= 1:
            raise ValueError("mtm_ratio and mtm_prob are probabilities (0 to 1)")
        if self.dim % self.heads:
            raise ValueError(f"dim {self.dim} is not a multiple of heads {self.heads}")

    @property
    def loss_weights(self) -> tuple[float, float, float]:
        """(w_text, w_category, w_topic); the aux weights are 0 without Aux."""
        if not self.aux:
            return (1.0, 0.0, 0.0)
        return AUX_WEIGHTS[self.aux_weights]

    def encoder_spec(self):  # type: ignore[no-untyped-def]
        from tvr.vtt.models.encoder import EncoderSpec

        return EncoderSpec(self.encoder, self.encoder_weights, self.encoder_seed)


def part_defaults(model: str) -> dict[str, bool]:
    """The Diff/MTM/Aux switches a model starts with (all on for ttnet, all off otherwise)."""
    on = model == "ttnet"
    return {"diff": on, "mtm": on, "aux": on}
