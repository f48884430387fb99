"""aten.nonzero (an output whose size depends on the data) and aten.masked_scatter (the
next source element into every masked position): float and boolean inputs, a mask
computed in the graph, broadcasting of the mask."""

import torch


class Nonzero(torch.nn.Module):
    def forward(self, x):
        return torch.nonzero(x)


class NonzeroOfMask(torch.nn.Module):
    def forward(self, x):
        return torch.nonzero(x > 0.5)


class MaskedScatter(torch.nn.Module):
    def forward(self, x, mask, source):
        return x.masked_scatter(mask, source)


class MaskedScatterComputed(torch.nn.Module):
    def forward(self, x, source):
        return x.masked_scatter(x < 0, source)


def test_nonzero(test_runner):
    x = torch.randn(5, 6) * (torch.rand(5, 6) > 0.4)
    test_runner.lower_and_run_model(Nonzero(), (x,))


def test_nonzero_of_computed_mask(test_runner):
    test_runner.lower_and_run_model(NonzeroOfMask(), (torch.rand(3, 4, 5),))


def test_masked_scatter(test_runner):
    mask = torch.rand(4, 7) > 0.5
    test_runner.lower_and_run_model(MaskedScatter(), (torch.randn(4, 7), mask, torch.randn(4, 7)))


def test_masked_scatter_broadcast_mask(test_runner):
    mask = torch.rand(1, 6) > 0.5  # one row of the mask for every row of x
    test_runner.lower_and_run_model(MaskedScatter(), (torch.randn(5, 6), mask, torch.randn(30)))


def test_masked_scatter_computed_mask(test_runner):
    test_runner.lower_and_run_model(MaskedScatterComputed(), (torch.randn(3, 8), torch.randn(24)))
