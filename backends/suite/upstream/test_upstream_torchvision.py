"""ExecuTorch's `models/test_torchvision.py`, from the installed wheel, unmodified: 20
torchvision models with random weights on one 224x224 input, static and (all but
maxvit_t and vit_b_16) dynamic shapes. See `wheel_tests.py`."""

import pytest

from . import wheel_tests

# Full-size programs: the model suites' time limit, not the operators' 300 s.
pytestmark = pytest.mark.time_limit(1200)

wheel_tests.reexport("models.test_torchvision", globals(), "test_torchvision_models",
                     note="its models need torchvision, the `examples` extra: the portable "
                          "and xnnpack envs have it")
