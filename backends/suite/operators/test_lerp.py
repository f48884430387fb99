"""aten.lerp (Scalar and Tensor weight): weights inside and outside [0, 1], broadcasting,
float16/bfloat16, dynamic batch."""

import pytest
import torch


class LerpScalar(torch.nn.Module):
    def __init__(self, weight):
        super().__init__()
        self.weight = weight

    def forward(self, start, end):
        return torch.lerp(start, end, self.weight)


class LerpTensor(torch.nn.Module):
    def forward(self, start, end, weight):
        return torch.lerp(start, end, weight)


@pytest.mark.parametrize("weight", [0.0, 0.3, 1.0, -0.5, 1.75], ids=["w0", "w0_3", "w1", "w_neg0_5", "w1_75"])
def test_lerp_scalar_weight(test_runner, weight):
    test_runner.lower_and_run_model(LerpScalar(weight), (torch.randn(3, 4, 5), torch.randn(3, 4, 5)))


def test_lerp_tensor_weight(test_runner):
    # weights on both sides of 0.5 (lerp switches formula there) and outside [0, 1]
    weight = torch.rand(4, 6) * 2 - 0.5
    test_runner.lower_and_run_model(LerpTensor(), (torch.randn(4, 6), torch.randn(4, 6) * 3, weight))


def test_lerp_broadcast(test_runner):
    test_runner.lower_and_run_model(LerpTensor(), (torch.randn(2, 3, 5), torch.randn(5), torch.rand(3, 1)))
    test_runner.lower_and_run_model(LerpScalar(0.6), (torch.randn(4, 1), torch.randn(1, 2, 6)))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_lerp_dtype(test_runner, dtype):
    start, end, weight = torch.randn(4, 8), torch.randn(4, 8), torch.rand(4, 8)
    test_runner.lower_and_run_model(LerpTensor(), (start.to(dtype), end.to(dtype), weight.to(dtype)))


def test_lerp_special_values(test_runner):
    inf, nan = float("inf"), float("nan")
    start = torch.tensor([0.0, 1.0, inf, -inf, nan, 2.0, 5.0])
    end = torch.tensor([1.0, inf, 1.0, inf, 1.0, 2.0, -5.0])
    weight = torch.tensor([0.5, 0.5, 0.0, 0.5, 0.5, 10.0, 1.0])
    test_runner.lower_and_run_model(LerpTensor(), (start, end, weight))


def test_lerp_dynamic_shape(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    start, end, weight = torch.randn(4, 7), torch.randn(4, 7), torch.rand(4, 7)
    test_runner.lower_and_run_model(LerpTensor(), (start, end, weight),
                                    dynamic_shapes=({0: batch}, {0: batch}, {0: batch}))
