"""aten.upsample_nearest2d and aten.upsample_bilinear2d via F.interpolate: scale, size, align_corners."""

import torch


class Interpolate(torch.nn.Module):
    def __init__(self, mode, size=None, scale_factor=None, align_corners=None):
        super().__init__()
        self.mode = mode
        self.size = size
        self.scale_factor = scale_factor
        self.align_corners = align_corners

    def forward(self, x):
        return torch.nn.functional.interpolate(
            x, size=self.size, scale_factor=self.scale_factor, mode=self.mode,
            align_corners=self.align_corners,
        )


def test_upsample_nearest_scale(test_runner):
    test_runner.lower_and_run_model(Interpolate("nearest", scale_factor=2), (torch.randn(1, 3, 4, 4),))


def test_upsample_nearest_size(test_runner):
    test_runner.lower_and_run_model(Interpolate("nearest", size=(7, 5)), (torch.randn(1, 2, 4, 3),))


def test_upsample_bilinear_scale(test_runner):
    model = Interpolate("bilinear", scale_factor=2, align_corners=False)
    test_runner.lower_and_run_model(model, (torch.randn(1, 3, 4, 4),))


def test_upsample_bilinear_align_corners(test_runner):
    model = Interpolate("bilinear", size=(9, 7), align_corners=True)
    test_runner.lower_and_run_model(model, (torch.randn(1, 2, 5, 4),))


def test_upsample_bilinear_downsample(test_runner):
    model = Interpolate("bilinear", size=(3, 3), align_corners=False)
    test_runner.lower_and_run_model(model, (torch.randn(1, 2, 8, 8),))
