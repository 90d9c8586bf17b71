"""Real learning tests: each model overfits one batch of 8 samples to Acc 1.0.

Acc is measured the way validation measures it: greedy decoding, then the predicted steps are
simulated on the initial states and compared with the final states. Tiny images (30x40) keep
this cheap; the large encoders (BCNN, DUDA) and the remaining variants are marked slow. The
models are in their default (original) forms unless a test names tvr's.
"""

import pytest

from tests.trance.models.helpers import overfit

FAST = ["cnn+-g", "resnet+-g", "resnet--t"]
SLOW = ["cnn--g", "resnet--g", "resnet+-t", "bcnn-g", "duda-g"]


@pytest.mark.parametrize("name", FAST)
def test_overfits_event(name):
    steps, acc = overfit(name, "event", max_steps=400)
    print(f"\n{name}: Acc {acc} after {steps} steps")
    assert acc == 1.0


@pytest.mark.parametrize("name", ["cnn+-g", "resnet+-g"])
def test_overfits_event_in_cpu_bf16_with_nhwc(name):
    """The fast CPU setting (bf16 autocast, channels_last) still learns: a batch to Acc 1.0."""
    steps, acc = overfit(name, "event", max_steps=400, cpu_bf16=True)
    print(f"\n{name} bf16 NHWC: Acc {acc} after {steps} steps")
    assert acc == 1.0


def test_basic_single_step_overfits():
    steps, acc = overfit("cnn+-g", "basic", max_steps=300)
    print(f"\ncnn+-g basic: Acc {acc} after {steps} steps")
    assert acc == 1.0


@pytest.mark.slow
@pytest.mark.parametrize("name", SLOW)
def test_overfits_event_slow(name):
    steps, acc = overfit(name, "event", max_steps=400)
    print(f"\n{name}: Acc {acc} after {steps} steps")
    assert acc == 1.0


def test_tvr_transformer_form_overfits():
    """tvr's first -T decoder (runs trained before the forms existed) still learns."""
    steps, acc = overfit("resnet--t", "event", max_steps=400, decoder_form="tvr")
    print(f"\nresnet--t (tvr form): Acc {acc} after {steps} steps")
    assert acc == 1.0


@pytest.mark.slow
def test_tvr_duda_form_overfits():
    steps, acc = overfit("duda-g", "event", max_steps=400, duda_form="tvr")
    print(f"\nduda-g (tvr form): Acc {acc} after {steps} steps")
    assert acc == 1.0
