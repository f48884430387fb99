"""aten.adaptive_max_pool1d: global, divisible, non-divisible output sizes, indices, dtypes."""

import pytest
import torch


class AdaptiveMaxPool1d(torch.nn.Module):
    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def forward(self, x):
        return torch.nn.functional.adaptive_max_pool1d(x, self.output_size, self.return_indices)


@pytest.mark.parametrize(
    "output_size, length",
    [(1, 13), (4, 16), (5, 17)],
    ids=["global", "divisible", "non_divisible"],
)
def test_adaptive_maxpool1d_output_size(test_runner, output_size, length):
    model = AdaptiveMaxPool1d(output_size)
    test_runner.lower_and_run_model(model, (torch.randn(2, 4, length),))


def test_adaptive_maxpool1d_return_indices(test_runner):
    model = AdaptiveMaxPool1d(5, return_indices=True)
    test_runner.lower_and_run_model(model, (torch.randn(2, 3, 17),))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_adaptive_maxpool1d_dtype(test_runner, dtype):
    model = AdaptiveMaxPool1d(4)
    test_runner.lower_and_run_model(model, (torch.randn(2, 4, 16).to(dtype),))


def test_adaptive_maxpool1d_dynamic_batch(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    model = AdaptiveMaxPool1d(4)
    test_runner.lower_and_run_model(model, (torch.randn(3, 4, 16),),
                                    dynamic_shapes=({0: batch},))
