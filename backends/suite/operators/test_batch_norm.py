"""aten._native_batch_norm_legit_no_training: BatchNorm1d (2-D, 3-D), BatchNorm2d, no affine, after a conv."""

import torch


def _set_statistics(norm: torch.nn.modules.batchnorm._BatchNorm) -> None:
    with torch.no_grad():
        norm.running_mean.copy_(torch.randn(norm.num_features))
        norm.running_var.copy_(torch.rand(norm.num_features) + 0.5)
        if norm.affine:
            norm.weight.uniform_(0.5, 1.5)
            norm.bias.uniform_(-0.5, 0.5)


class BatchNorm1d(torch.nn.Module):
    def __init__(self, num_features):
        super().__init__()
        self.norm = torch.nn.BatchNorm1d(num_features)
        _set_statistics(self.norm)

    def forward(self, x):
        return self.norm(x)


class BatchNorm2d(torch.nn.Module):
    def __init__(self, num_features, affine=True):
        super().__init__()
        self.norm = torch.nn.BatchNorm2d(num_features, affine=affine)
        _set_statistics(self.norm)

    def forward(self, x):
        return self.norm(x)


class ConvBatchNorm2d(torch.nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = torch.nn.Conv2d(in_channels, out_channels, 3, padding=1)
        self.norm = torch.nn.BatchNorm2d(out_channels)
        _set_statistics(self.norm)

    def forward(self, x):
        return self.norm(self.conv(x))


def test_batch_norm1d(test_runner):
    test_runner.lower_and_run_model(BatchNorm1d(6), (torch.randn(4, 6),))
    test_runner.lower_and_run_model(BatchNorm1d(6), (torch.randn(2, 6, 10),))


def test_batch_norm2d(test_runner):
    test_runner.lower_and_run_model(BatchNorm2d(4), (torch.randn(2, 4, 6, 6),))


def test_batch_norm2d_no_affine(test_runner):
    test_runner.lower_and_run_model(BatchNorm2d(3, affine=False), (torch.randn(1, 3, 5, 5),))


def test_batch_norm2d_after_conv(test_runner):
    test_runner.lower_and_run_model(ConvBatchNorm2d(3, 8), (torch.randn(1, 3, 8, 8),))
