"""ExecuTorch's `models/test_torchaudio.py`, from the installed wheel, unmodified:
conformer, wav2letter and wavernn (which the wheel itself skips). See `wheel_tests.py`."""

import pytest

from . import wheel_tests

pytestmark = pytest.mark.time_limit(1200)

wheel_tests.reexport("models.test_torchaudio", globals(), "test_torchaudio_models",
                     note="torchaudio is in no env: 2.11.1, its last release, is built "
                          "against the CUDA torch 2.11 and does not import beside the CPU "
                          "torch 2.13")
