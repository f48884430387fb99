"""aten.rand, randn, randperm and native_dropout inside the program. The program's draws
are not eager's, so each test returns what does not depend on the draw: rand's values lie
in [0, 1), randn's are finite, a sorted randperm is arange, and a dropout output element is
0 or its input scaled by 1 / (1 - p). This checks that the op lowers, runs and keeps its
contract, not its random stream."""

import torch


class RandInUnitInterval(torch.nn.Module):
    def forward(self, x):
        draw = torch.rand(x.shape)
        return (draw >= 0) & (draw < 1)


class RandnIsFinite(torch.nn.Module):
    def forward(self, x):
        draw = torch.randn(x.shape)
        return x + 0 * draw, draw.abs() < float("inf")


class SortedRandperm(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.n = n

    def forward(self, x):
        return x + torch.sort(torch.randperm(self.n)).values


class DropoutKeepsOrZeroes(torch.nn.Module):
    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, x):
        out = torch.nn.functional.dropout(x, self.p, training=True)  # aten.native_dropout
        kept = torch.isclose(out, x / (1 - self.p))
        return (out == 0) | kept


def test_rand(test_runner):
    test_runner.lower_and_run_model(RandInUnitInterval(), (torch.randn(8, 16),))


def test_randn(test_runner):
    test_runner.lower_and_run_model(RandnIsFinite(), (torch.randn(4, 32),))


def test_randperm(test_runner):
    test_runner.lower_and_run_model(SortedRandperm(24), (torch.randint(0, 9, (24,)),))


def test_native_dropout(test_runner):
    x = torch.rand(6, 20) + 0.5  # away from zero: a kept element is never 0
    test_runner.lower_and_run_model(DropoutKeepsOrZeroes(0.25), (x,))
