"""Cases for the `pipeline` report fixture: each pipeline status from real runs of the
flows in fault_flows.py, plus the portable and XNNPACK flows. See ../README.md."""

import torch


class Add(torch.nn.Module):
    def forward(self, x, y):
        return x + y


class CumSum(torch.nn.Module):
    """XNNPACK takes no node of it: pass_undelegated on the xnnpack flow."""

    def forward(self, x):
        return torch.cumsum(x, 0)


class BrokenModel(torch.nn.Module):
    def forward(self, x):
        raise ValueError(f"the test's own model is broken (input of shape {tuple(x.shape)})")


def test_add(test_runner):
    test_runner.lower_and_run_model(Add(), (torch.randn(2, 8), torch.randn(2, 8)))


def test_cumsum(test_runner):
    test_runner.lower_and_run_model(CumSum(), (torch.randn(4, 3),))


def test_two_subtests(test_runner):
    test_runner.lower_and_run_model(Add(), (torch.randn(3), torch.randn(3)))
    test_runner.lower_and_run_model(CumSum(), (torch.randn(5, 2),))


def test_known_gap(test_runner):
    test_runner.lower_and_run_model(Add(), (torch.randn(4), torch.randn(4)))


def test_unsupported_case(test_runner):
    test_runner.lower_and_run_model(Add(), (torch.randn(4), torch.randn(4)))


def test_invalid_model(test_runner):
    test_runner.lower_and_run_model(BrokenModel(), (torch.randn(2, 3),))
