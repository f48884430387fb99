"""aten.adaptive_max_pool2d: global, divisible, non-divisible, None sizes, indices, dtypes."""

import pytest
import torch


class AdaptiveMaxPool2d(torch.nn.Module):
    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def forward(self, x):
        return torch.nn.functional.adaptive_max_pool2d(x, self.output_size, self.return_indices)


@pytest.mark.parametrize(
    "output_size, spatial",
    [(1, (7, 7)), ((2, 4), (8, 8)), ((3, 5), (10, 11)), ((None, 2), (5, 6))],
    ids=["global", "divisible", "non_divisible", "keep_height"],
)
def test_adaptive_maxpool2d_output_size(test_runner, output_size, spatial):
    model = AdaptiveMaxPool2d(output_size)
    test_runner.lower_and_run_model(model, (torch.randn(2, 3, *spatial),))


def test_adaptive_maxpool2d_return_indices(test_runner):
    model = AdaptiveMaxPool2d((3, 5), return_indices=True)
    test_runner.lower_and_run_model(model, (torch.randn(1, 3, 10, 11),))


def test_adaptive_maxpool2d_unbatched(test_runner):
    test_runner.lower_and_run_model(AdaptiveMaxPool2d(2), (torch.randn(4, 6, 6),))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_adaptive_maxpool2d_dtype(test_runner, dtype):
    model = AdaptiveMaxPool2d((2, 3))
    test_runner.lower_and_run_model(model, (torch.randn(1, 4, 8, 9).to(dtype),))


def test_adaptive_maxpool2d_dynamic_batch(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    model = AdaptiveMaxPool2d(2)
    test_runner.lower_and_run_model(model, (torch.randn(3, 4, 8, 8),),
                                    dynamic_shapes=({0: batch},))
