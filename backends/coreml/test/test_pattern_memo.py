"""The coreml_static_int8 quantizer factory memoizes CoreMLQuantizer's pattern graphs (see
flows.py). Checked here with a stand-in for the pattern export, so the test takes seconds:
one build per distinct pattern, a fresh copy for every caller, the factory built once."""

import pytest

utils = pytest.importorskip("executorch.backends.apple.coreml.quantizer._coreml_quantizer_utils")
torch = pytest.importorskip("torch")

from etsuite.backends.coreml import flows  # noqa: E402


@pytest.fixture
def builds(monkeypatch):
    """Replace the pattern export with a recorder, then install the memo over it."""
    monkeypatch.delenv("ETSUITE_COREML_NO_PATTERN_CACHE", raising=False)
    made = []

    def fake_export(pattern, example_inputs, is_cuda=False):
        made.append(pattern)
        return {"graph_of": len(made)}  # what the memo keeps and copies

    monkeypatch.setattr(utils, "_get_aten_graph_module", fake_export)
    flows._memoized_pattern_graphs()
    assert getattr(utils._get_aten_graph_module, "_etsuite_memoized", False)
    return made


def test_one_build_per_distinct_pattern(builds):
    relu, gelu = torch.nn.functional.relu, torch.nn.functional.gelu
    first = utils.get_conv_pattern(2, relu, True)
    again = utils.get_conv_pattern(2, relu, True)
    assert len(builds) == 1 and first == again and first is not again  # a copy each time
    others = (lambda: utils.get_conv_pattern(2, relu, False),
              lambda: utils.get_conv_pattern(1, relu, True),
              lambda: utils.get_conv_pattern(2, gelu),
              lambda: utils.get_linear_pattern(relu),
              lambda: utils.get_binary_op_act_pattern(torch.add, relu),
              lambda: utils.get_binary_op_act_pattern(torch.mul, relu))
    for other in others:
        assert other()["graph_of"] == len(builds)  # each is new: built, not served from the memo
    assert len(builds) == 7


def test_memo_installs_once(builds):
    memoized = utils._get_aten_graph_module
    flows._memoized_pattern_graphs()
    assert utils._get_aten_graph_module is memoized


def test_quantizer_built_once_per_process():
    assert flows._static_int8_quantizer() is flows._static_int8_quantizer()
