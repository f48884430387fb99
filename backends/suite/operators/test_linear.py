"""aten.linear: bias on/off, 2-D, 3-D and 4-D inputs, a single output feature."""

import torch


def test_linear_2d(test_runner):
    test_runner.lower_and_run_model(torch.nn.Linear(16, 8), (torch.randn(4, 16),))


def test_linear_3d(test_runner):
    test_runner.lower_and_run_model(torch.nn.Linear(16, 8), (torch.randn(2, 5, 16),))


def test_linear_no_bias(test_runner):
    model = torch.nn.Linear(16, 8, bias=False)
    test_runner.lower_and_run_model(model, (torch.randn(4, 16),))
    test_runner.lower_and_run_model(model, (torch.randn(2, 5, 16),))


def test_linear_4d(test_runner):
    test_runner.lower_and_run_model(torch.nn.Linear(8, 6), (torch.randn(2, 3, 4, 8),))


def test_linear_single_output(test_runner):
    test_runner.lower_and_run_model(torch.nn.Linear(10, 1), (torch.randn(3, 10),))
