"""aten.layer_norm: last dimension, several dimensions, without affine, without bias, custom eps."""

import torch


class LayerNorm(torch.nn.Module):
    def __init__(self, shape, eps=1e-5, elementwise_affine=True, bias=True):
        super().__init__()
        self.norm = torch.nn.LayerNorm(shape, eps=eps, elementwise_affine=elementwise_affine,
                                       bias=bias)
        if self.norm.weight is not None:
            torch.nn.init.uniform_(self.norm.weight, 0.5, 1.5)
        if self.norm.bias is not None:
            torch.nn.init.uniform_(self.norm.bias, -0.5, 0.5)

    def forward(self, x):
        return self.norm(x)


def test_layer_norm_last_dim(test_runner):
    test_runner.lower_and_run_model(LayerNorm(16), (torch.randn(2, 5, 16),))


def test_layer_norm_multiple_dims(test_runner):
    test_runner.lower_and_run_model(LayerNorm((4, 8)), (torch.randn(2, 4, 8),))


def test_layer_norm_no_affine(test_runner):
    model = LayerNorm(16, elementwise_affine=False)
    test_runner.lower_and_run_model(model, (torch.randn(3, 16),))


def test_layer_norm_no_bias(test_runner):
    test_runner.lower_and_run_model(LayerNorm(12, bias=False), (torch.randn(2, 3, 12),))


def test_layer_norm_eps(test_runner):
    test_runner.lower_and_run_model(LayerNorm(10, eps=0.1), (torch.randn(4, 10) * 0.2,))
