"""aten.asinh, acosh and atanh: per-op float32 inside each domain (acosh from 1, atanh
inside (-1, 1)), its edges (acosh(1) = 0, atanh(+-1) = +-inf, out of domain: nan),
float16/bfloat16, rank 4."""

import pytest
import torch

OPS = {"asinh": torch.asinh, "acosh": torch.acosh, "atanh": torch.atanh}


class Hyperbolic(torch.nn.Module):
    def __init__(self, name):
        super().__init__()
        self.op = OPS[name]

    def forward(self, x):
        return self.op(x)


def _input(name, shape):
    if name == "acosh":
        return 1 + torch.rand(shape) * 6
    if name == "atanh":
        return torch.rand(shape) * 1.9 - 0.95
    return torch.randn(shape) * 5


@pytest.mark.parametrize("op", list(OPS))
def test_inverse_hyperbolic_float32(test_runner, op):
    test_runner.lower_and_run_model(Hyperbolic(op), (_input(op, (4, 15)),))
    test_runner.lower_and_run_model(Hyperbolic(op), (_input(op, (2, 3, 4, 5)),))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
@pytest.mark.parametrize("op", list(OPS))
def test_inverse_hyperbolic_dtype(test_runner, op, dtype):
    test_runner.lower_and_run_model(Hyperbolic(op), (_input(op, (3, 16)).to(dtype),))


@pytest.mark.parametrize("op", list(OPS))
def test_inverse_hyperbolic_edges(test_runner, op):
    x = torch.tensor([1.0, -1.0, 0.0, 0.5, 2.0, -3.0, float("inf"), float("nan")])
    test_runner.lower_and_run_model(Hyperbolic(op), (x,))
