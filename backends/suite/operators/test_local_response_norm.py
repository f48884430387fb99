"""F.local_response_norm (pow/avg_pool/div): size, alpha/beta/k, 3-D to 5-D inputs, dtypes.

A 3-D input lowers through avg_pool2d; 4-D and 5-D inputs lower through avg_pool3d.
"""

import pytest
import torch


class LocalResponseNorm(torch.nn.Module):
    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, x):
        return torch.nn.functional.local_response_norm(x, self.size, self.alpha, self.beta,
                                                       self.k)


@pytest.mark.parametrize("size", [1, 2, 5], ids=["size1", "size2", "size5"])
def test_local_response_norm_size(test_runner, size):
    model = LocalResponseNorm(size, alpha=0.1)
    test_runner.lower_and_run_model(model, (torch.randn(2, 8, 10) * 3,))


@pytest.mark.parametrize(
    "alpha, beta, k", [(0.5, 0.75, 1.0), (0.1, 1.5, 0.5)], ids=["alpha0.5", "beta1.5_k0.5"])
def test_local_response_norm_params(test_runner, alpha, beta, k):
    model = LocalResponseNorm(3, alpha, beta, k)
    test_runner.lower_and_run_model(model, (torch.randn(2, 6, 9) * 2,))


@pytest.mark.parametrize(
    "shape", [(2, 8, 5, 5), (1, 5, 3, 4, 4)], ids=["rank4", "rank5"])
def test_local_response_norm_ranks(test_runner, shape):
    model = LocalResponseNorm(3, alpha=0.1)
    test_runner.lower_and_run_model(model, (torch.randn(*shape) * 2,))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=["float16", "bfloat16"])
def test_local_response_norm_dtype(test_runner, dtype):
    # A 3-D input: eager's 4-D path (avg_pool3d) has no CPU half kernel.
    model = LocalResponseNorm(3, alpha=0.1)
    test_runner.lower_and_run_model(model, (torch.randn(2, 6, 10).to(dtype),))


def test_local_response_norm_dynamic_batch(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    model = torch.nn.LocalResponseNorm(3, alpha=0.1)
    test_runner.lower_and_run_model(model, (torch.randn(3, 6, 10),),
                                    dynamic_shapes=({0: batch},))
