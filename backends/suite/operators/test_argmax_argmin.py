"""aten.argmax and aten.argmin: dim (incl. negative), keepdim, whole tensor, float and
integer dtypes with ties, nan, dynamic batch."""

import pytest
import torch

OPS = {"argmax": torch.argmax, "argmin": torch.argmin}


class ArgReduce(torch.nn.Module):
    def __init__(self, name, dim=None, keepdim=False):
        super().__init__()
        self.op = OPS[name]
        self.dim = dim
        self.keepdim = keepdim

    def forward(self, x):
        return self.op(x, dim=self.dim, keepdim=self.keepdim)


DIM_CASES = {
    "dim0": dict(dim=0),
    "dim_neg1": dict(dim=-1),
    "dim1_keepdim": dict(dim=1, keepdim=True),
}


@pytest.mark.parametrize("case", list(DIM_CASES))
@pytest.mark.parametrize("op", list(OPS))
def test_arg_reduce_dim(test_runner, op, case):
    test_runner.lower_and_run_model(ArgReduce(op, **DIM_CASES[case]), (torch.randn(5, 6, 7),))


@pytest.mark.parametrize("op", list(OPS))
def test_arg_reduce_whole_tensor(test_runner, op):
    test_runner.lower_and_run_model(ArgReduce(op), (torch.randn(4, 3, 5),))
    test_runner.lower_and_run_model(ArgReduce(op, dim=0), (torch.randn(41),))


@pytest.mark.parametrize(
    "dtype", [torch.float16, torch.bfloat16, torch.int32, torch.int64],
    ids=["float16", "bfloat16", "int32", "int64"],
)
@pytest.mark.parametrize("op", list(OPS))
def test_arg_reduce_dtype(test_runner, op, dtype):
    # small integer values: many ties, the first index of the extreme value wins
    x = torch.randint(-4, 5, (4, 9)).to(dtype)
    test_runner.lower_and_run_model(ArgReduce(op, dim=1), (x,))


@pytest.mark.parametrize("op", list(OPS))
def test_arg_reduce_special_values(test_runner, op):
    nan, inf = float("nan"), float("inf")
    x = torch.tensor([[1.0, nan, 3.0, -2.0], [inf, 2.0, -inf, inf], [-inf, -inf, 0.0, -0.0]])
    test_runner.lower_and_run_model(ArgReduce(op, dim=1), (x,))


def test_arg_reduce_dynamic_shape(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    test_runner.lower_and_run_model(ArgReduce("argmax", dim=-1), (torch.randn(4, 10),),
                                    dynamic_shapes=({0: batch},))
