"""aten.adaptive_max_pool3d: global, non-divisible and None output sizes, indices, dtypes."""

import pytest
import torch


class AdaptiveMaxPool3d(torch.nn.Module):
    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def forward(self, x):
        return torch.nn.functional.adaptive_max_pool3d(x, self.output_size, self.return_indices)


@pytest.mark.parametrize(
    "output_size, spatial",
    [(1, (5, 6, 7)), ((3, 2, 5), (5, 7, 9)), ((None, 2, 3), (3, 6, 6))],
    ids=["global", "non_divisible", "keep_depth"],
)
def test_adaptive_maxpool3d_output_size(test_runner, output_size, spatial):
    model = AdaptiveMaxPool3d(output_size)
    test_runner.lower_and_run_model(model, (torch.randn(2, 3, *spatial),))


def test_adaptive_maxpool3d_return_indices(test_runner):
    model = AdaptiveMaxPool3d((3, 2, 5), return_indices=True)
    test_runner.lower_and_run_model(model, (torch.randn(1, 2, 5, 7, 9),))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_adaptive_maxpool3d_dtype(test_runner, dtype):
    model = AdaptiveMaxPool3d((2, 2, 2))
    test_runner.lower_and_run_model(model, (torch.randn(1, 4, 4, 6, 6).to(dtype),))


def test_adaptive_maxpool3d_dynamic_batch(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    model = AdaptiveMaxPool3d(2)
    test_runner.lower_and_run_model(model, (torch.randn(2, 3, 4, 4, 6),),
                                    dynamic_shapes=({0: batch},))
