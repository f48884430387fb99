"""The generated tier: one case per OpInfo sample of a core ATen op (the list and why
some are left out: opinfo_cases.toml; how a case is built: opinfo_cases.py). A case id,
`test_opinfo[add-float32-5]`, names the OpInfo, the dtype and the sample's index; with the
seed it regenerates the inputs."""

import pytest

from .opinfo_cases import build_case, load_case_ids


@pytest.mark.parametrize("case", load_case_ids())
def test_opinfo(test_runner, case):
    model, inputs = build_case(case)
    test_runner.lower_and_run_model(model, inputs)
