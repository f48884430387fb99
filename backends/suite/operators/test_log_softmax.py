"""aten._log_softmax: dims, ranks 1-5, large values, size-1 dim, dtypes, -inf/inf/nan rows."""

import pytest
import torch


class LogSoftmax(torch.nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.nn.functional.log_softmax(x, dim=self.dim)


@pytest.mark.parametrize(
    "dim, shape",
    [(-1, (20,)), (0, (6, 5)), (-3, (2, 3, 4, 5)), (2, (2, 1, 6, 3, 4))],
    ids=["rank1_last", "first", "negative_inner", "rank5"],
)
def test_log_softmax_dim(test_runner, dim, shape):
    test_runner.lower_and_run_model(LogSoftmax(dim), (torch.randn(*shape) * 3,))


def test_log_softmax_large_values(test_runner):
    x = torch.randn(4, 16) * 200 + 1000
    test_runner.lower_and_run_model(LogSoftmax(-1), (x,))


def test_log_softmax_size_one_dim(test_runner):
    test_runner.lower_and_run_model(LogSoftmax(1), (torch.randn(3, 1, 5),))


def test_log_softmax_large(test_runner):
    test_runner.lower_and_run_model(LogSoftmax(-1), (torch.randn(8, 64, 128),))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_log_softmax_dtype(test_runner, dtype):
    test_runner.lower_and_run_model(LogSoftmax(-1), ((torch.randn(3, 4, 8) * 3).to(dtype),))


def test_log_softmax_inf_nan(test_runner):
    inf, nan = float("inf"), float("nan")
    x = torch.tensor([[-inf, 1.0, 2.0, -inf],   # masked entries: finite row result
                      [inf, 1.0, 0.0, -1.0],    # +inf entry
                      [nan, 1.0, 0.0, -1.0],    # nan entry
                      [0.5, 1.0, 2.0, 3.0]])
    test_runner.lower_and_run_model(LogSoftmax(-1), (x,))


def test_log_softmax_dynamic_batch(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    test_runner.lower_and_run_model(LogSoftmax(-1), (torch.randn(3, 4, 10),),
                                    dynamic_shapes=({0: batch},))
