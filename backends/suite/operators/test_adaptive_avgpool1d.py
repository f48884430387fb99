"""aten.adaptive_avg_pool1d: global, divisible, non-divisible, upsampling, identity; dtypes."""

import pytest
import torch


class AdaptiveAvgPool1d(torch.nn.Module):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, x):
        return torch.nn.functional.adaptive_avg_pool1d(x, self.output_size)


@pytest.mark.parametrize(
    "output_size, length",
    [(1, 13), (4, 16), (5, 17), (8, 8), (7, 5)],
    ids=["global", "divisible", "non_divisible", "identity", "larger_than_input"],
)
def test_adaptive_avgpool1d_output_size(test_runner, output_size, length):
    model = AdaptiveAvgPool1d(output_size)
    test_runner.lower_and_run_model(model, (torch.randn(2, 4, length),))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_adaptive_avgpool1d_dtype(test_runner, dtype):
    model = AdaptiveAvgPool1d(4)
    test_runner.lower_and_run_model(model, (torch.randn(2, 4, 16).to(dtype),))


def test_adaptive_avgpool1d_dynamic_batch(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    model = AdaptiveAvgPool1d(4)
    test_runner.lower_and_run_model(model, (torch.randn(3, 4, 16),),
                                    dynamic_shapes=({0: batch},))
