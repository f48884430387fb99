"""aten.rms_norm (nn.RMSNorm, F.rms_norm): 1-D/2-D normalized_shape, affine on/off, eps, dtypes."""

import pytest
import torch


class RMSNorm(torch.nn.Module):
    def __init__(self, shape, eps=None, elementwise_affine=True):
        super().__init__()
        self.norm = torch.nn.RMSNorm(shape, eps=eps, elementwise_affine=elementwise_affine)
        if self.norm.weight is not None:
            torch.nn.init.uniform_(self.norm.weight, 0.5, 1.5)

    def forward(self, x):
        return self.norm(x)


class FunctionalRMSNorm(torch.nn.Module):
    def __init__(self, shape, eps=None):
        super().__init__()
        self.shape = shape
        self.eps = eps

    def forward(self, x, weight):
        return torch.nn.functional.rms_norm(x, self.shape, weight, eps=self.eps)


@pytest.mark.parametrize(
    "normalized_shape, input_shape",
    [(16, (16,)), (256, (4, 32, 256)), (7, (3, 2, 4, 7))],
    ids=["last_dim_rank1", "last_dim_rank3_large", "last_dim_rank4_odd"],
)
def test_rms_norm_last_dim(test_runner, normalized_shape, input_shape):
    model = RMSNorm(normalized_shape)
    test_runner.lower_and_run_model(model, (torch.randn(*input_shape),))


def test_rms_norm_two_dims(test_runner):
    model = RMSNorm((4, 8))
    test_runner.lower_and_run_model(model, (torch.randn(3, 4, 8),))


@pytest.mark.parametrize("normalized_shape", [12, (3, 12)], ids=["one_dim", "two_dims"])
def test_rms_norm_no_affine(test_runner, normalized_shape):
    model = RMSNorm(normalized_shape, elementwise_affine=False)
    test_runner.lower_and_run_model(model, (torch.randn(2, 3, 12) * 3,))


def test_rms_norm_eps(test_runner):
    model = RMSNorm(10, eps=0.1)
    test_runner.lower_and_run_model(model, (torch.randn(4, 10) * 0.2,))


def test_rms_norm_functional_weight_input(test_runner):
    model = FunctionalRMSNorm((2, 6), eps=1e-6)
    test_runner.lower_and_run_model(model, (torch.randn(3, 2, 6), torch.rand(2, 6) + 0.5))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_rms_norm_dtype(test_runner, dtype):
    model = RMSNorm(16).to(dtype)
    test_runner.lower_and_run_model(model, (torch.randn(2, 3, 16).to(dtype),))


def test_rms_norm_dynamic_batch(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    model = RMSNorm(16)
    test_runner.lower_and_run_model(model, (torch.randn(3, 5, 16),),
                                    dynamic_shapes=({0: batch},))
