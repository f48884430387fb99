"""aten.any and aten.all (whole tensor, dim, dims, keepdim): bool, float and integer
inputs, all-true/all-false/nan edges, dynamic batch."""

import pytest
import torch

OPS = {"any": torch.any, "all": torch.all}


class Reduce(torch.nn.Module):
    def __init__(self, name, dim=None, keepdim=False):
        super().__init__()
        self.op = OPS[name]
        self.dim = dim
        self.keepdim = keepdim

    def forward(self, x):
        if self.dim is None:
            return self.op(x)
        return self.op(x, dim=self.dim, keepdim=self.keepdim)


def _input(name, shape, dtype):
    # "any" gets mostly false elements, "all" mostly true ones, so both outcomes occur per slice
    threshold = 0.85 if name == "any" else 0.15
    mask = torch.rand(shape) > threshold
    if dtype == torch.bool:
        return mask
    if dtype.is_floating_point:
        return ((torch.rand(shape) + 0.1) * torch.where(torch.rand(shape) > 0.5, 1.0, -1.0) * mask).to(dtype)
    return (torch.randint(1, 9, shape) * mask).to(dtype)


@pytest.mark.parametrize("dtype", [torch.bool, torch.float32, torch.int32], ids=["bool", "float32", "int32"])
@pytest.mark.parametrize("op", list(OPS))
def test_any_all_dim(test_runner, op, dtype):
    test_runner.lower_and_run_model(Reduce(op, dim=-1), (_input(op, (4, 5, 6), dtype),))


@pytest.mark.parametrize("op", list(OPS))
def test_any_all_whole_tensor(test_runner, op):
    test_runner.lower_and_run_model(Reduce(op), (_input(op, (3, 4, 5), torch.bool),))
    uniform = torch.ones(3, 4, dtype=torch.bool) if op == "all" else torch.zeros(3, 4, dtype=torch.bool)
    test_runner.lower_and_run_model(Reduce(op), (uniform,))


@pytest.mark.parametrize("op", list(OPS))
def test_any_all_keepdim_dims(test_runner, op):
    test_runner.lower_and_run_model(Reduce(op, dim=0, keepdim=True), (_input(op, (6, 5), torch.bool),))
    test_runner.lower_and_run_model(Reduce(op, dim=(1, 2)), (_input(op, (3, 2, 4, 2), torch.bool),))


@pytest.mark.parametrize("op", list(OPS))
def test_any_all_float_special_values(test_runner, op):
    # nan and -0.0: nan is true, -0.0 is false
    x = torch.tensor([[0.0, -0.0, 0.0], [float("nan"), 0.0, 0.0], [float("inf"), 1.0, float("nan")],
                      [-0.0, 2.0, 1e-40]])
    test_runner.lower_and_run_model(Reduce(op, dim=1), (x,))


def test_any_all_dynamic_shape(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    test_runner.lower_and_run_model(Reduce("any", dim=-1), (_input("any", (4, 9), torch.bool),),
                                    dynamic_shapes=({0: batch},))
