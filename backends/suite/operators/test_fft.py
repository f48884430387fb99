"""aten._fft_r2c and aten._fft_c2r: a real FFT of real input (its complex output taken
apart into real and imaginary parts), and the inverse back to a real signal, over the last
dimension, with "ortho" normalization too."""

import pytest
import torch


class RealFft(torch.nn.Module):
    def __init__(self, norm=None):
        super().__init__()
        self.norm = norm

    def forward(self, x):
        return torch.view_as_real(torch.fft.rfft(x, norm=self.norm))


class RoundTrip(torch.nn.Module):
    """rfft, then irfft back to a signal of the input's length."""

    def forward(self, x):
        return torch.fft.irfft(torch.fft.rfft(x), n=x.shape[-1]) + x


@pytest.mark.parametrize("norm", [None, "ortho"], ids=["backward", "ortho"])
def test_rfft(test_runner, norm):
    test_runner.lower_and_run_model(RealFft(norm), (torch.randn(4, 32),))


def test_rfft_irfft(test_runner):
    test_runner.lower_and_run_model(RoundTrip(), (torch.randn(3, 16),))
