"""aten.grid_sampler_2d/3d via F.grid_sample: bilinear/nearest/bicubic,
zeros/border/reflection padding, align_corners."""

import pytest
import torch


class GridSample(torch.nn.Module):
    def __init__(self, mode, padding_mode, align_corners):
        super().__init__()
        self.mode = mode
        self.padding_mode = padding_mode
        self.align_corners = align_corners

    def forward(self, x, grid):
        return torch.nn.functional.grid_sample(
            x, grid, mode=self.mode, padding_mode=self.padding_mode, align_corners=self.align_corners)


def _grid(*shape):
    # Coordinates slightly beyond [-1, 1], so padding modes matter.
    return torch.rand(*shape) * 2.4 - 1.2


GRID_CASES = [
    ("bilinear", "zeros", False), ("bilinear", "border", True), ("bilinear", "reflection", False),
    ("bilinear", "reflection", True), ("nearest", "zeros", True), ("nearest", "border", False),
    ("nearest", "reflection", True),
]


@pytest.mark.parametrize(
    "mode, padding_mode, align_corners", GRID_CASES,
    ids=[f"{m}_{p}_{'align_corners' if a else 'no_align'}" for m, p, a in GRID_CASES],
)
def test_grid_sample(test_runner, mode, padding_mode, align_corners):
    inputs = (torch.randn(2, 3, 5, 7), _grid(2, 4, 6, 2))
    test_runner.lower_and_run_model(GridSample(mode, padding_mode, align_corners), inputs)


def test_grid_sample_bicubic(test_runner):
    inputs = (torch.randn(1, 2, 6, 6), _grid(1, 5, 5, 2))
    test_runner.lower_and_run_model(GridSample("bicubic", "border", False), inputs)


def test_grid_sample_3d_trilinear(test_runner):
    inputs = (torch.randn(1, 2, 4, 5, 6), _grid(1, 3, 4, 5, 3))
    test_runner.lower_and_run_model(GridSample("bilinear", "zeros", False), inputs)


def test_grid_sample_large(test_runner):
    inputs = (torch.randn(2, 16, 32, 32), _grid(2, 24, 40, 2))
    test_runner.lower_and_run_model(GridSample("bilinear", "zeros", False), inputs)


def test_grid_sample_dynamic(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    inputs = (torch.randn(3, 2, 5, 5), _grid(3, 4, 4, 2))
    test_runner.lower_and_run_model(GridSample("bilinear", "zeros", False), inputs,
                                    dynamic_shapes=({0: batch}, {0: batch}))
