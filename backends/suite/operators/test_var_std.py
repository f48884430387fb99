"""aten.var.correction and aten.std.correction: one and several dims, whole tensor,
unbiased/correction (0, 1, 2), keepdim, float16/bfloat16, dynamic batch."""

import pytest
import torch

OPS = {"var": torch.var, "std": torch.std}


class VarStd(torch.nn.Module):
    def __init__(self, name, dim=None, correction=1, keepdim=False):
        super().__init__()
        self.op = OPS[name]
        self.dim = dim
        self.correction = correction
        self.keepdim = keepdim

    def forward(self, x):
        return self.op(x, dim=self.dim, correction=self.correction, keepdim=self.keepdim)


class VarStdUnbiased(torch.nn.Module):
    def __init__(self, name, dim, unbiased):
        super().__init__()
        self.op = OPS[name]
        self.dim = dim
        self.unbiased = unbiased

    def forward(self, x):
        return self.op(x, self.dim, unbiased=self.unbiased)


DIM_CASES = {
    "dim_neg1": dict(dim=-1),
    "dims12_keepdim": dict(dim=(1, 2), keepdim=True),
    "all": dict(dim=None),
}


@pytest.mark.parametrize("case", list(DIM_CASES))
@pytest.mark.parametrize("op", list(OPS))
def test_var_std_dims(test_runner, op, case):
    test_runner.lower_and_run_model(VarStd(op, **DIM_CASES[case]), (torch.randn(3, 4, 5, 6) * 2 + 1,))


@pytest.mark.parametrize("correction", [0, 2], ids=["correction0", "correction2"])
@pytest.mark.parametrize("op", list(OPS))
def test_var_std_correction(test_runner, op, correction):
    test_runner.lower_and_run_model(VarStd(op, dim=1, correction=correction), (torch.randn(4, 10, 3),))


@pytest.mark.parametrize("unbiased", [True, False], ids=["unbiased", "biased"])
def test_var_std_unbiased_arg(test_runner, unbiased):
    test_runner.lower_and_run_model(VarStdUnbiased("std", 0, unbiased), (torch.randn(7, 5),))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
@pytest.mark.parametrize("op", list(OPS))
def test_var_std_dtype(test_runner, op, dtype):
    test_runner.lower_and_run_model(VarStd(op, dim=-1), (torch.randn(4, 16).to(dtype),))


def test_var_std_single_element_slice(test_runner):
    # one element per slice: zero with correction 0, nan with the default correction 1
    x = torch.randn(3, 1, 4)
    test_runner.lower_and_run_model(VarStd("var", dim=1, correction=0), (x,))
    test_runner.lower_and_run_model(VarStd("var", dim=1), (x,))


def test_var_std_dynamic_shape(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    test_runner.lower_and_run_model(VarStd("var", dim=-1), (torch.randn(4, 12),),
                                    dynamic_shapes=({0: batch},))
