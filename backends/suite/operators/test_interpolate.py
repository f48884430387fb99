"""aten.upsample_* via F.interpolate: nearest-exact, bicubic, fractional scales,
downsampling, 1-D linear, 3-D trilinear."""

import pytest
import torch


class Interpolate(torch.nn.Module):
    def __init__(self, mode, size=None, scale_factor=None, align_corners=None, antialias=False):
        super().__init__()
        self.mode = mode
        self.size = size
        self.scale_factor = scale_factor
        self.align_corners = align_corners
        self.antialias = antialias

    def forward(self, x):
        return torch.nn.functional.interpolate(
            x, size=self.size, scale_factor=self.scale_factor, mode=self.mode,
            align_corners=self.align_corners, antialias=self.antialias,
        )


@pytest.mark.parametrize(
    "size, scale_factor", [((3, 2), None)], ids=["size_down"],
)
def test_interpolate_nearest_exact(test_runner, size, scale_factor):
    model = Interpolate("nearest-exact", size=size, scale_factor=scale_factor)
    test_runner.lower_and_run_model(model, (torch.randn(1, 2, 5, 6),))


def test_interpolate_nearest_fractional_scale(test_runner):
    model = Interpolate("nearest", scale_factor=(1.5, 0.5))
    test_runner.lower_and_run_model(model, (torch.randn(2, 3, 6, 8),))


@pytest.mark.parametrize("align_corners", [False, True], ids=["no_align", "align_corners"])
def test_interpolate_bicubic(test_runner, align_corners):
    model = Interpolate("bicubic", size=(9, 11), align_corners=align_corners)
    test_runner.lower_and_run_model(model, (torch.randn(1, 2, 5, 6),))


def test_interpolate_bilinear_fractional_scale(test_runner):
    model = Interpolate("bilinear", scale_factor=1.75, align_corners=False)
    test_runner.lower_and_run_model(model, (torch.randn(1, 3, 4, 6),))


def test_interpolate_bilinear_antialias_downsample(test_runner):
    model = Interpolate("bilinear", size=(5, 4), align_corners=False, antialias=True)
    test_runner.lower_and_run_model(model, (torch.randn(1, 2, 12, 10),))


@pytest.mark.parametrize("align_corners", [False, True], ids=["no_align", "align_corners"])
def test_interpolate_linear_1d(test_runner, align_corners):
    model = Interpolate("linear", size=13, align_corners=align_corners)
    test_runner.lower_and_run_model(model, (torch.randn(2, 3, 6),))


@pytest.mark.parametrize("align_corners", [False, True], ids=["no_align", "align_corners"])
def test_interpolate_trilinear(test_runner, align_corners):
    model = Interpolate("trilinear", size=(5, 6, 7), align_corners=align_corners)
    test_runner.lower_and_run_model(model, (torch.randn(1, 2, 3, 4, 4),))


def test_interpolate_large(test_runner):
    model = Interpolate("bilinear", scale_factor=2, align_corners=False)
    test_runner.lower_and_run_model(model, (torch.randn(1, 16, 32, 40),))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_interpolate_dtype(test_runner, dtype):
    model = Interpolate("nearest", scale_factor=2)
    test_runner.lower_and_run_model(model, (torch.randn(1, 3, 4, 5).to(dtype),))


def test_interpolate_dynamic_batch(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    model = Interpolate("bilinear", size=(8, 8), align_corners=False)
    test_runner.lower_and_run_model(model, (torch.randn(2, 3, 4, 4),), dynamic_shapes=({0: batch},))
