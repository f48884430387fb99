"""Tensor creation inside forward: arange, full, zeros, ones, zeros_like, ones_like, full_like."""

import pytest
import torch


class Arange(torch.nn.Module):
    def __init__(self, start, end, step, dtype=None):
        super().__init__()
        self.start, self.end, self.step, self.dtype = start, end, step, dtype

    def forward(self, x):
        return x + torch.arange(self.start, self.end, self.step, dtype=self.dtype)


class ArangeOfSize(torch.nn.Module):
    def forward(self, x):
        return x * torch.arange(x.shape[-1])


class ArangeDynamic(torch.nn.Module):
    def forward(self, x):
        return x + torch.arange(x.shape[0], dtype=x.dtype).unsqueeze(-1)


class Constant(torch.nn.Module):
    def __init__(self, name):
        super().__init__()
        self.name = name

    def forward(self, x):
        if self.name == "zeros":
            return x + torch.zeros(x.shape[1:])
        if self.name == "ones":
            return x * torch.ones(3, 1, 1)
        return x - torch.full((1, 4), 2.5)


class Like(torch.nn.Module):
    def __init__(self, name):
        super().__init__()
        self.name = name

    def forward(self, x):
        if self.name == "zeros_like":
            return torch.zeros_like(x)
        if self.name == "ones_like":
            return torch.ones_like(x)
        return torch.full_like(x, 7)


class FullLikeDtype(torch.nn.Module):
    def forward(self, x):
        return torch.full_like(x, -3, dtype=torch.int32), torch.ones_like(x, dtype=torch.bool)


@pytest.mark.parametrize(
    "start, end, step, dtype",
    [(5, -5, -2, None), (0.0, 1.0, 0.125, None), (0, 6, 1, torch.float32)],
    ids=["negative_step", "float_step", "float_dtype"],
)
def test_arange(test_runner, start, end, step, dtype):
    length = len(torch.arange(start, end, step))
    integral = dtype is None and isinstance(step, int)
    x = torch.randint(-5, 5, (2, length)) if integral else torch.randn(2, length)
    test_runner.lower_and_run_model(Arange(start, end, step, dtype), (x,))


def test_arange_of_input_size(test_runner):
    test_runner.lower_and_run_model(ArangeOfSize(), (torch.randn(3, 7),))


@pytest.mark.parametrize("name", ["zeros", "ones", "full"])
def test_constant_tensor(test_runner, name):
    test_runner.lower_and_run_model(Constant(name), (torch.randn(3, 2, 4),))


@pytest.mark.parametrize("name", ["zeros_like", "ones_like", "full_like"])
def test_like(test_runner, name):
    test_runner.lower_and_run_model(Like(name), (torch.randn(2, 3, 5),))


def test_full_like_int32(test_runner):
    test_runner.lower_and_run_model(Like("full_like"), (torch.randint(-5, 5, (2, 3, 5), dtype=torch.int32),))


def test_like_other_dtype(test_runner):
    test_runner.lower_and_run_model(FullLikeDtype(), (torch.randn(4, 3),))


def test_creation_large(test_runner):
    test_runner.lower_and_run_model(Like("full_like"), (torch.randn(8, 64, 96),))


def test_arange_dynamic(test_runner):
    batch = torch.export.Dim("batch", min=2, max=16)
    test_runner.lower_and_run_model(ArangeDynamic(), (torch.randn(5, 3),),
                                    dynamic_shapes=({0: batch},))
