"""aten._adaptive_avg_pool3d: global, divisible, non-divisible, None output sizes; dtypes."""

import pytest
import torch


class AdaptiveAvgPool3d(torch.nn.Module):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, x):
        return torch.nn.functional.adaptive_avg_pool3d(x, self.output_size)


@pytest.mark.parametrize(
    "output_size, spatial",
    [(1, (5, 6, 7)), ((2, 2, 4), (4, 6, 8)), ((3, 2, 5), (5, 7, 9)),
     ((None, 2, 3), (3, 6, 6))],
    ids=["global", "divisible", "non_divisible", "keep_depth"],
)
def test_adaptive_avgpool3d_output_size(test_runner, output_size, spatial):
    model = AdaptiveAvgPool3d(output_size)
    test_runner.lower_and_run_model(model, (torch.randn(2, 3, *spatial),))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_adaptive_avgpool3d_dtype(test_runner, dtype):
    model = AdaptiveAvgPool3d((2, 2, 2))
    test_runner.lower_and_run_model(model, (torch.randn(1, 4, 4, 6, 6).to(dtype),))


def test_adaptive_avgpool3d_dynamic_batch(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    model = AdaptiveAvgPool3d(2)
    test_runner.lower_and_run_model(model, (torch.randn(2, 3, 4, 4, 6),),
                                    dynamic_shapes=({0: batch},))
