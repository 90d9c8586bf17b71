"""Model names: parse `cnn+-g`, `resnet--t`, `BCNN-G`... and build the model for a setting.

A name is an encoder and a decoder letter joined by "-": encoders `cnn-` (difference of the two
images), `cnn+` (concatenation), `resnet-`, `resnet+`, `bcnn`, `duda`; decoders `g` (GRU) and
`t` (Transformer). The paper's symbols are accepted too (`CNN₋-G`, `ResNet⊕-T`), and so are the
spelled-out forms `cnn-sub-g`, `resnet-cat-t`. The eight models of Table 9 are `PAPER_MODELS`;
every encoder works with both decoders. In the Basic setting the decoder letter is ignored: the
model is the single-step `BasicNet` on the same encoder.

Two parts come in two forms, picked by `build_model(..., decoder_form=, duda_form=)` (saved in a
run's config.json as `TrainConfig.decoder_form` / `duda_form`): "original", the public release's
and the paper's model, the default; and "tvr", tvr's first version, which runs trained before the
forms existed keep. `decoder_form` changes only the Transformer (`-t`), `duda_form` only DUDA.
"""

from __future__ import annotations

from dataclasses import dataclass

from torch import nn

from tvr.trance.models.decoders import DECODER_FORMS, DECODERS, build_decoder
from tvr.trance.models.encoders import DUDA_FORMS, build_encoder
from tvr.trance.models.trancenet import BasicNet, TranceNet
from tvr.trance.world.vocab import SETTINGS

DEFAULT_IMAGE_SIZE = (120, 160)  # height, width
HIDDEN = 128
#: the forms of a run configured before `decoder_form` and `duda_form` existed
LEGACY_FORMS = {"decoder_form": "tvr", "duda_form": "tvr"}

#: encoder spellings -> encoder kind of tvr.trance.models.encoders
_ENCODER_ALIASES = {
    "cnn-": "cnn-sub",
    "cnn-sub": "cnn-sub",
    "cnnsub": "cnn-sub",
    "cnn+": "cnn-cat",
    "cnn-cat": "cnn-cat",
    "cnncat": "cnn-cat",
    "resnet-": "resnet-sub",
    "resnet-sub": "resnet-sub",
    "resnetsub": "resnet-sub",
    "resnet+": "resnet-cat",
    "resnet-cat": "resnet-cat",
    "resnetcat": "resnet-cat",
    "bcnn": "bcnn",
    "duda": "duda",
}
_CANONICAL_ENCODER = {
    "cnn-sub": "cnn-",
    "cnn-cat": "cnn+",
    "resnet-sub": "resnet-",
    "resnet-cat": "resnet+",
    "bcnn": "bcnn",
    "duda": "duda",
}

#: the eight TranceNet models of the paper's Table 9, canonical names
PAPER_MODELS = (
    "cnn--g",
    "cnn+-g",
    "bcnn-g",
    "duda-g",
    "resnet--g",
    "resnet+-g",
    "resnet--t",
    "resnet+-t",
)
#: every encoder with every decoder
ALL_MODELS = tuple(f"{enc}-{dec}" for enc in _CANONICAL_ENCODER.values() for dec in DECODERS)


@dataclass(frozen=True)
class ModelSpec:
    """A parsed model name: encoder kind ("cnn-sub", ...) and decoder ("g" or "t")."""

    encoder: str
    decoder: str

    @property
    def name(self) -> str:
        return f"{_CANONICAL_ENCODER[self.encoder]}-{self.decoder}"


def parse_model_name(name: str) -> ModelSpec:
    """The spec of a model name; ValueError with the accepted names if it is not one."""
    s = name.strip().lower().replace(" ", "").replace("_", "-")
    s = s.replace("⊕", "+").replace("₊", "+").replace("₋", "-").replace("−", "-")
    head, sep, dec = s.rpartition("-")
    if not sep or dec not in DECODERS:
        raise ValueError(
            f"unknown model {name!r}: a name ends in -g (GRU) or -t (Transformer); "
            f"known names: {', '.join(ALL_MODELS)}"
        )
    if head in ("cnn", "resnet"):
        raise ValueError(
            f"ambiguous model {name!r}: say {head}- (image difference) or {head}+ "
            f"(concatenated images), e.g. {head}--{dec} or {head}+-{dec}"
        )
    if head not in _ENCODER_ALIASES:
        raise ValueError(f"unknown encoder in model {name!r}: known names: {', '.join(ALL_MODELS)}")
    return ModelSpec(_ENCODER_ALIASES[head], dec)


def build_model(
    name: str,
    setting: str = "event",
    image_size: tuple[int, int] = DEFAULT_IMAGE_SIZE,
    hidden: int = HIDDEN,
    *,
    decoder_form: str = DECODER_FORMS[0],
    duda_form: str = DUDA_FORMS[0],
) -> nn.Module:
    """The model `name` for `setting` ("basic", "event" or "view") on images of (height, width),
    with the Transformer decoder and the DUDA encoder of the given forms (see the module)."""
    if setting not in SETTINGS:
        raise ValueError(f"unknown setting {setting!r}: expected one of {SETTINGS}")
    if decoder_form not in DECODER_FORMS:
        raise ValueError(f"unknown decoder form {decoder_form!r}: expected one of {DECODER_FORMS}")
    spec = parse_model_name(name)
    encoder = build_encoder(spec.encoder, tuple(image_size), duda_form=duda_form)
    if setting == "basic":
        return BasicNet(encoder, hidden)

    def factory(input_dim: int, h: int) -> nn.Module:
        return build_decoder(spec.decoder, input_dim, h, form=decoder_form)

    return TranceNet(encoder, factory, hidden)


def count_parameters(model: nn.Module, trainable_only: bool = True) -> int:
    return sum(p.numel() for p in model.parameters() if p.requires_grad or not trainable_only)
