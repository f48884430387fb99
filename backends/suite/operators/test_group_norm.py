"""aten.native_group_norm: group counts (1 to per-channel), affine on/off, eps, ranks, dtypes."""

import pytest
import torch


class GroupNorm(torch.nn.Module):
    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True):
        super().__init__()
        self.norm = torch.nn.GroupNorm(num_groups, num_channels, eps=eps, affine=affine)
        if affine:
            torch.nn.init.uniform_(self.norm.weight, 0.5, 1.5)
            torch.nn.init.uniform_(self.norm.bias, -0.5, 0.5)

    def forward(self, x):
        return self.norm(x)


@pytest.mark.parametrize("num_groups", [1, 4, 32],
                         ids=["groups1", "groups4", "groups32_per_channel"])
def test_group_norm_groups(test_runner, num_groups):
    model = GroupNorm(num_groups, 32)
    test_runner.lower_and_run_model(model, (torch.randn(2, 32, 15, 16),))


@pytest.mark.parametrize(
    "shape", [(4, 6), (1, 6, 3, 4, 5)], ids=["rank2", "rank5"])
def test_group_norm_ranks(test_runner, shape):
    model = GroupNorm(3, 6)
    test_runner.lower_and_run_model(model, (torch.randn(*shape),))


def test_group_norm_no_affine(test_runner):
    model = GroupNorm(2, 6, affine=False)
    test_runner.lower_and_run_model(model, (torch.randn(2, 6, 4, 4) * 3 + 1,))


def test_group_norm_eps(test_runner):
    model = GroupNorm(2, 4, eps=0.1)
    test_runner.lower_and_run_model(model, (torch.randn(2, 4, 3, 3) * 0.2,))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_group_norm_dtype(test_runner, dtype):
    model = GroupNorm(2, 4).to(dtype)
    test_runner.lower_and_run_model(model, (torch.randn(2, 4, 4, 4).to(dtype),))


def test_group_norm_dynamic_batch(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    model = GroupNorm(2, 4)
    test_runner.lower_and_run_model(model, (torch.randn(3, 4, 5, 5),),
                                    dynamic_shapes=({0: batch},))
