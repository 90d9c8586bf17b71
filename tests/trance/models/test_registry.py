"""Model names: canonical names, the paper's spellings, helpful errors."""

import pytest

from tvr.trance.models import ALL_MODELS, PAPER_MODELS, parse_model_name


def test_paper_models_are_known_and_canonical():
    assert len(PAPER_MODELS) == 8
    assert set(PAPER_MODELS) <= set(ALL_MODELS)
    assert len(ALL_MODELS) == 12
    for name in ALL_MODELS:
        assert parse_model_name(name).name == name


@pytest.mark.parametrize(
    ("name", "encoder", "decoder"),
    [
        ("cnn+-g", "cnn-cat", "g"),
        ("CNN--G", "cnn-sub", "g"),
        ("CNN₋-G", "cnn-sub", "g"),
        ("ResNet⊕-T", "resnet-cat", "t"),
        ("resnet-sub-t", "resnet-sub", "t"),
        ("resnet_cat_g", "resnet-cat", "g"),
        ("BCNN-G", "bcnn", "g"),
        (" duda-t ", "duda", "t"),
    ],
)
def test_spellings(name, encoder, decoder):
    spec = parse_model_name(name)
    assert (spec.encoder, spec.decoder) == (encoder, decoder)


def test_ambiguous_name_says_how_to_fix():
    with pytest.raises(ValueError, match=r"resnet--t or resnet\+-t"):
        parse_model_name("resnet-t")


@pytest.mark.parametrize("name", ["vgg-g", "cnn+", "cnn+-x", ""])
def test_unknown_names(name):
    with pytest.raises(ValueError, match="known names"):
        parse_model_name(name)
