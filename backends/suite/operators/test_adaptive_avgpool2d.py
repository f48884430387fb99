"""aten.adaptive_avg_pool2d: global pooling, divisible and non-divisible output sizes, None, identity."""

import torch


def test_adaptive_avgpool2d_global(test_runner):
    model = torch.nn.AdaptiveAvgPool2d(1)
    test_runner.lower_and_run_model(model, (torch.randn(2, 8, 7, 7),))


def test_adaptive_avgpool2d_divisible(test_runner):
    model = torch.nn.AdaptiveAvgPool2d((2, 4))
    test_runner.lower_and_run_model(model, (torch.randn(1, 3, 8, 8),))


def test_adaptive_avgpool2d_non_divisible(test_runner):
    model = torch.nn.AdaptiveAvgPool2d((3, 5))
    test_runner.lower_and_run_model(model, (torch.randn(1, 3, 10, 11),))


def test_adaptive_avgpool2d_keep_one_dim(test_runner):
    model = torch.nn.AdaptiveAvgPool2d((None, 2))
    test_runner.lower_and_run_model(model, (torch.randn(1, 4, 5, 6),))


def test_adaptive_avgpool2d_identity(test_runner):
    model = torch.nn.AdaptiveAvgPool2d((4, 4))
    test_runner.lower_and_run_model(model, (torch.randn(1, 4, 4, 4),))
