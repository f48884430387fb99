"""aten.reflection_pad{1,2,3}d, aten.replication_pad{1,2,3}d and circular pad via F.pad:
asymmetric, unbatched, dtypes."""

import pytest
import torch


class Pad(torch.nn.Module):
    def __init__(self, pad, mode):
        super().__init__()
        self.pad = pad
        self.mode = mode

    def forward(self, x):
        return torch.nn.functional.pad(x, self.pad, mode=self.mode)


CASES = [
    ("1d", (2, 1, 7), (2, 3)),
    ("2d", (1, 2, 5, 6), (1, 2, 3, 0)),
    ("3d", (1, 2, 4, 5, 3), (1, 1, 2, 0, 1, 2)),
]


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("shape, pad", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_pad_mode(test_runner, mode, shape, pad):
    test_runner.lower_and_run_model(Pad(pad, mode), (torch.randn(shape),))


def test_reflect_pad_unbatched(test_runner):
    test_runner.lower_and_run_model(Pad((1, 0), "reflect"), (torch.randn(3, 6),))


def test_reflect_pad_maximal(test_runner):
    # Reflection padding may be at most size - 1 on each side.
    test_runner.lower_and_run_model(Pad((3, 3, 2, 2), "reflect"), (torch.randn(1, 2, 3, 4),))


def test_pad_modes_large(test_runner):
    test_runner.lower_and_run_model(Pad((2, 2, 2, 2), "reflect"), (torch.randn(2, 16, 40, 48),))


def test_pad_mode_dtype(test_runner):
    test_runner.lower_and_run_model(Pad((1, 2, 2, 1), "replicate"),
                                    (torch.randn(1, 3, 5, 5).to(torch.bfloat16),))


def test_pad_mode_dynamic(test_runner):
    batch = torch.export.Dim("batch", min=1, max=8)
    test_runner.lower_and_run_model(Pad((1, 1, 1, 1), "replicate"), (torch.randn(2, 3, 5, 5),),
                                    dynamic_shapes=({0: batch},))
