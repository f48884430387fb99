"""aten._to_copy (dtype casts): float32 to and from float16/bfloat16/int32/int64/bool,
int and half casts, edges."""

import pytest
import torch


class Cast(torch.nn.Module):
    def __init__(self, dtype):
        super().__init__()
        self.dtype = dtype

    def forward(self, x):
        return x.to(self.dtype)


def _tensor(shape, dtype):
    if dtype == torch.bool:
        return torch.rand(shape) > 0.5
    if dtype in (torch.int32, torch.int64):
        return torch.randint(-1000, 1000, shape, dtype=dtype)
    return (torch.randn(shape) * 10).to(dtype)


CASTS = [
    (torch.float32, torch.float16), (torch.float32, torch.bfloat16), (torch.float32, torch.int32),
    (torch.float32, torch.int64), (torch.float32, torch.bool), (torch.float16, torch.float32),
    (torch.bfloat16, torch.float32), (torch.int32, torch.float32), (torch.int64, torch.float32),
    (torch.bool, torch.float32), (torch.int64, torch.int32),
]


def _name(dtype):
    return str(dtype).replace("torch.", "")


@pytest.mark.parametrize(
    "source, target", CASTS, ids=[f"{_name(s)}_to_{_name(t)}" for s, t in CASTS],
)
def test_cast(test_runner, source, target):
    test_runner.lower_and_run_model(Cast(target), (_tensor((3, 4, 5), source),))


def test_cast_float_to_int_truncates(test_runner):
    x = torch.tensor([-2.9, -2.5, -1.1, -0.5, 0.0, 0.4, 0.5, 1.7, 2.5, 99.99])
    test_runner.lower_and_run_model(Cast(torch.int32), (x,))


def test_cast_float_to_bool_zeros(test_runner):
    x = torch.tensor([0.0, -0.0, 1e-30, -3.0, 0.5, 0.0])
    test_runner.lower_and_run_model(Cast(torch.bool), (x,))


def test_cast_float16_overflow_inf_nan(test_runner):
    x = torch.tensor([1e5, -1e5, 65504.0, float("inf"), float("-inf"), float("nan"), 1e-8])
    test_runner.lower_and_run_model(Cast(torch.float16), (x,))


def test_cast_large(test_runner):
    test_runner.lower_and_run_model(Cast(torch.float16), (torch.randn(8, 64, 96),))


def test_cast_dynamic(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    test_runner.lower_and_run_model(Cast(torch.int32), (torch.randn(3, 4) * 10,),
                                    dynamic_shapes=({0: batch},))
