"""aten._cdist_forward and aten._pdist_forward: pairwise distances between two sets of
points and within one set, p = 2, 1 and inf, batched cdist."""

import pytest
import torch


class Cdist(torch.nn.Module):
    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, x, y):
        # without the matrix-multiply shortcut for p = 2, which decomposes into mm
        return torch.cdist(x, y, p=self.p, compute_mode="donot_use_mm_for_euclid_dist")


class Pdist(torch.nn.Module):
    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, x):
        return torch.nn.functional.pdist(x, p=self.p)


P_VALUES = [2.0, 1.0, float("inf")]
P_IDS = ["p2", "p1", "pinf"]


@pytest.mark.parametrize("p", P_VALUES, ids=P_IDS)
def test_cdist(test_runner, p):
    test_runner.lower_and_run_model(Cdist(p), (torch.randn(7, 5), torch.randn(9, 5)))


def test_cdist_batched(test_runner):
    test_runner.lower_and_run_model(Cdist(2.0), (torch.randn(3, 6, 4), torch.randn(3, 8, 4)))


@pytest.mark.parametrize("p", P_VALUES, ids=P_IDS)
def test_pdist(test_runner, p):
    test_runner.lower_and_run_model(Pdist(p), (torch.randn(10, 6),))
