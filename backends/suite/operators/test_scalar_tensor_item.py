"""aten.scalar_tensor, aten._local_scalar_dense (`.item()` of a tensor inside the
program), aten.empty_strided and aten.empty.memory_format (uninitialized memory, written
before it is read)."""

import torch


class ScalarTensor(torch.nn.Module):
    def forward(self, x):
        return x * torch.ops.aten.scalar_tensor(1.5) + torch.ops.aten.scalar_tensor(-2.0)


class ScaleByItem(torch.nn.Module):
    def forward(self, x, scale):
        return x * scale.item()  # aten._local_scalar_dense


class ScaleByLargest(torch.nn.Module):
    def forward(self, x):
        return x / x.abs().max().item()


class EmptyStridedFilled(torch.nn.Module):
    def forward(self, x):
        buffer = torch.empty_strided((x.shape[0], x.shape[1]), (x.shape[1], 1))
        return torch.fill(buffer, 3.0) * x


class EmptyFilled(torch.nn.Module):
    def forward(self, x):
        return torch.empty(x.shape).fill_(0.5) + x


def test_scalar_tensor(test_runner):
    test_runner.lower_and_run_model(ScalarTensor(), (torch.randn(4, 6),))


def test_item(test_runner):
    test_runner.lower_and_run_model(ScaleByItem(), (torch.randn(3, 5), torch.tensor(2.5)))
    test_runner.lower_and_run_model(ScaleByLargest(), (torch.randn(6, 7),))


def test_empty_strided(test_runner):
    test_runner.lower_and_run_model(EmptyStridedFilled(), (torch.randn(5, 8),))


def test_empty_memory_format(test_runner):
    test_runner.lower_and_run_model(EmptyFilled(), (torch.randn(2, 3, 4),))
