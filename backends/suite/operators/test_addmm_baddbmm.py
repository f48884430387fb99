"""aten.addmm, aten.baddbmm, aten.addmv, aten.addbmm: broadcast bias, alpha and beta
(including beta=0), dtypes."""

import pytest
import torch


class Addmm(torch.nn.Module):
    def __init__(self, beta=1.0, alpha=1.0):
        super().__init__()
        self.beta = beta
        self.alpha = alpha

    def forward(self, bias, x, y):
        return torch.addmm(bias, x, y, beta=self.beta, alpha=self.alpha)


class Baddbmm(torch.nn.Module):
    def __init__(self, beta=1.0, alpha=1.0):
        super().__init__()
        self.beta = beta
        self.alpha = alpha

    def forward(self, bias, x, y):
        return torch.baddbmm(bias, x, y, beta=self.beta, alpha=self.alpha)


class Addmv(torch.nn.Module):
    def __init__(self, beta=1.0, alpha=1.0):
        super().__init__()
        self.beta = beta
        self.alpha = alpha

    def forward(self, bias, matrix, vector):
        return torch.addmv(bias, matrix, vector, beta=self.beta, alpha=self.alpha)


class Addbmm(torch.nn.Module):
    def forward(self, bias, x, y):
        return torch.addbmm(bias, x, y, beta=0.5, alpha=2.0)


@pytest.mark.parametrize(
    "bias_shape, beta, alpha",
    [((6,), 1.0, 1.0), ((4, 1), 0.5, 2.0), ((4, 6), 0.0, -1.5)],
    ids=["bias_1d", "bias_column_alpha_beta", "beta0"],
)
def test_addmm(test_runner, bias_shape, beta, alpha):
    inputs = (torch.randn(bias_shape), torch.randn(4, 8), torch.randn(8, 6))
    test_runner.lower_and_run_model(Addmm(beta, alpha), inputs)


def test_addmm_beta0_ignores_nan(test_runner):
    # With beta=0 the bias is ignored, nan included.
    bias = torch.full((3, 5), float("nan"))
    test_runner.lower_and_run_model(Addmm(beta=0.0), (bias, torch.randn(3, 4), torch.randn(4, 5)))


@pytest.mark.parametrize(
    "bias_shape, beta, alpha",
    [((1, 4, 5), 0.25, 3.0), ((5,), 0.0, 1.0)],
    ids=["bias_broadcast_alpha_beta", "beta0"],
)
def test_baddbmm(test_runner, bias_shape, beta, alpha):
    inputs = (torch.randn(bias_shape), torch.randn(2, 4, 7), torch.randn(2, 7, 5))
    test_runner.lower_and_run_model(Baddbmm(beta, alpha), inputs)


def test_addmv(test_runner):
    inputs = (torch.randn(5), torch.randn(5, 9), torch.randn(9))
    test_runner.lower_and_run_model(Addmv(0.5, -2.0), inputs)


def test_addbmm(test_runner):
    inputs = (torch.randn(4, 5), torch.randn(3, 4, 6), torch.randn(3, 6, 5))
    test_runner.lower_and_run_model(Addbmm(), inputs)


def test_addmm_large(test_runner):
    inputs = (torch.randn(256), torch.randn(128, 192), torch.randn(192, 256))
    test_runner.lower_and_run_model(Addmm(beta=0.5, alpha=0.25), inputs)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_addmm_dtype(test_runner, dtype):
    inputs = tuple(t.to(dtype) for t in (torch.randn(6), torch.randn(4, 8), torch.randn(8, 6)))
    test_runner.lower_and_run_model(Addmm(), inputs)


def test_addmm_dynamic(test_runner):
    rows = torch.export.Dim("rows", min=1, max=16)
    inputs = (torch.randn(6), torch.randn(4, 8), torch.randn(8, 6))
    test_runner.lower_and_run_model(Addmm(), inputs, dynamic_shapes=(None, {0: rows}, None))
