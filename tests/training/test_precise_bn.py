"""BatchNorm statistics recomputed with the current weights (tvr.training.precise_bn)."""

import pytest
import torch
from torch import nn

from tvr.training.precise_bn import recalibrate_batchnorm


def _net():
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.BatchNorm2d(4))


def test_statistics_become_the_plain_average_over_the_batches():
    net = _net().eval()
    bn = net[1]
    bn.running_mean.fill_(7.0)  # stale statistics
    batches = [torch.randn(8, 3, 10, 10) * (i + 1) + i for i in range(3)]
    used = recalibrate_batchnorm(net, batches, net)
    assert used == 3
    feats = [net[0](x) for x in batches]
    expected_mean = torch.stack([f.mean((0, 2, 3)) for f in feats]).mean(0)
    expected_var = torch.stack([f.var((0, 2, 3)) for f in feats]).mean(0)  # unbiased, as BN
    torch.testing.assert_close(bn.running_mean, expected_mean, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(bn.running_var, expected_var, rtol=1e-4, atol=1e-5)
    assert not net.training and bn.momentum == 0.1  # mode and momentum restored
    assert not any(p.grad is not None for p in net.parameters())


def test_no_batch_leaves_the_statistics_and_says_so():
    net = _net().train()
    before = net[1].running_mean.clone().fill_(3.0)
    net[1].running_mean.copy_(before)
    with pytest.raises(ValueError, match="no batches"):
        recalibrate_batchnorm(net, [], net)
    torch.testing.assert_close(net[1].running_mean, before)
    assert net.training and net[1].momentum == 0.1


def test_a_run_recomputes_before_each_validation(tmp_path, monkeypatch):
    """`precise_bn_batches` calls the recalibration once per epoch, not in the sanity check, with
    that many training batches, and the run still ends in predictions."""
    from tvr.trance.train import module
    from tvr.trance.train.config import TrainConfig
    from tvr.trance.train.run import train

    calls = []
    real = module.recalibrate_batchnorm

    def counting(model, batches, forward):
        n = real(model, batches, forward)
        calls.append(n)
        return n

    monkeypatch.setattr(module, "recalibrate_batchnorm", counting)
    cfg = TrainConfig(model="cnn+-g", setting="basic", image_size=(30, 40), epochs=2,
                      synthetic_sizes={"train": 48, "val": 16, "test": 16}, batch_size=16,
                      output_dir=str(tmp_path), run_name="r", precise_bn_batches=2)  # fmt: skip
    run_dir = train(cfg)
    assert calls == [2, 2]
    assert len((run_dir / "predictions.jsonl").read_text().splitlines()) == 16
