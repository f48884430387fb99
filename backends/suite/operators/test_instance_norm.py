"""aten.instance_norm (InstanceNorm1d/2d/3d): affine, running stats, eps, unbatched, dtypes."""

import pytest
import torch

NORMS = {1: torch.nn.InstanceNorm1d, 2: torch.nn.InstanceNorm2d, 3: torch.nn.InstanceNorm3d}


class InstanceNorm(torch.nn.Module):
    def __init__(self, spatial_dims, num_features, eps=1e-5, affine=False,
                 track_running_stats=False):
        super().__init__()
        self.norm = NORMS[spatial_dims](num_features, eps=eps, affine=affine,
                                        track_running_stats=track_running_stats)
        if affine:
            torch.nn.init.uniform_(self.norm.weight, 0.5, 1.5)
            torch.nn.init.uniform_(self.norm.bias, -0.5, 0.5)
        if track_running_stats:
            self.norm.running_mean.uniform_(-0.5, 0.5)
            self.norm.running_var.uniform_(0.5, 2.0)

    def forward(self, x):
        return self.norm(x)


@pytest.mark.parametrize(
    "spatial_dims, shape, affine",
    [(1, (2, 4, 10), False), (2, (2, 4, 6, 7), False), (2, (4, 8, 16, 16), True),
     (3, (1, 3, 4, 5, 6), True)],
    ids=["1d_no_affine", "2d_no_affine", "2d_affine_large", "3d_affine"],
)
def test_instance_norm(test_runner, spatial_dims, shape, affine):
    model = InstanceNorm(spatial_dims, shape[1], affine=affine)
    test_runner.lower_and_run_model(model, (torch.randn(*shape) * 2 + 0.5,))


def test_instance_norm_eps(test_runner):
    model = InstanceNorm(2, 3, eps=0.1, affine=True)
    test_runner.lower_and_run_model(model, (torch.randn(2, 3, 4, 4) * 0.2,))


def test_instance_norm_running_stats(test_runner):
    model = InstanceNorm(2, 4, affine=True, track_running_stats=True)
    test_runner.lower_and_run_model(model, (torch.randn(2, 4, 5, 5),))


def test_instance_norm_unbatched(test_runner):
    model = InstanceNorm(1, 5)
    test_runner.lower_and_run_model(model, (torch.randn(5, 9),))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_instance_norm_dtype(test_runner, dtype):
    model = InstanceNorm(2, 4, affine=True).to(dtype)
    test_runner.lower_and_run_model(model, (torch.randn(2, 4, 5, 5).to(dtype),))


def test_instance_norm_dynamic_batch(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    model = InstanceNorm(2, 4, affine=True)
    test_runner.lower_and_run_model(model, (torch.randn(3, 4, 5, 5),),
                                    dynamic_shapes=({0: batch},))
