"""aten.where: a boolean mask input, a mask computed in the graph, broadcasting, scalar branches."""

import torch


class Where(torch.nn.Module):
    def forward(self, condition, x, y):
        return torch.where(condition, x, y)


class WherePositive(torch.nn.Module):
    def forward(self, x, y):
        return torch.where(x > 0, x, y)


class WhereScalarOther(torch.nn.Module):
    def forward(self, x):
        return torch.where(x > 0.5, x, 0.0)


def test_where_mask_input(test_runner):
    condition = torch.rand(3, 10) > 0.5
    test_runner.lower_and_run_model(Where(), (condition, torch.randn(3, 10), torch.randn(3, 10)))


def test_where_computed_mask(test_runner):
    test_runner.lower_and_run_model(WherePositive(), (torch.randn(2, 3, 4, 5), torch.randn(2, 3, 4, 5)))


def test_where_broadcast(test_runner):
    condition = torch.rand(4, 1, 6) > 0.5
    test_runner.lower_and_run_model(Where(), (condition, torch.randn(3, 6), torch.randn(4, 3, 1)))
    test_runner.lower_and_run_model(WherePositive(), (torch.randn(8), torch.randn(5, 8)))


def test_where_scalar_other(test_runner):
    test_runner.lower_and_run_model(WhereScalarOther(), (torch.randn(6, 7),))
