"""The upstream suite (backends/suite/upstream/): ExecuTorch's own model tests, imported
from the installed wheel unmodified, run through this plugin's `test_runner` per flow; a
wheel module that does not import still gives one skip_unsupported record per flow; and
the suite is opt-in, out of a default collection."""

UPSTREAM = "backends/suite/upstream"

# The suite's own modules, seen from a scratch folder at the same relative path.
STAR = "from etsuite.backends.suite.upstream.{} import *  # noqa: F403\n"
PLANTED = {
    "test_upstream_torchvision": STAR.format("test_upstream_torchvision"),
    "test_upstream_torchaudio": STAR.format("test_upstream_torchaudio"),
    "test_upstream_missing": (
        "from etsuite.backends.suite.upstream import wheel_tests\n\n"
        "wheel_tests.reexport('models.test_no_such_module', globals(), 'test_missing_models')\n"),
}


def plant(pytester, files: dict[str, str]) -> None:
    folder = pytester.path / UPSTREAM
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / f"{name}.py").write_text(text)


def test_an_upstream_model_and_the_modules_that_do_not_import_record_per_flow(pytester,
                                                                             run_suite):
    plant(pytester, PLANTED)
    run = run_suite(UPSTREAM, "--backend", "portable", "--flow", "portable", "--seed", "11",
                    "--localize", "off", "-p", "no:xdist",
                    "-k", "squeezenet1_1 and static or torchaudio or missing")
    assert run.ret == 0, run.stdout
    assert sorted(run.tests) == [
        f"{UPSTREAM}/test_upstream_missing.py::test_missing_models[portable]",
        f"{UPSTREAM}/test_upstream_torchaudio.py::test_torchaudio_models[portable]",
        f"{UPSTREAM}/test_upstream_torchvision.py::"
        "test_squeezenet1_1[portable-static_shapes-float32]",
    ]
    (model,) = run.records("squeezenet1_1")
    # the wheel's own test function, its own parametrize ids, lowered and run here
    assert (model["flow"], model["status"]) == ("portable", "pass")
    assert model["params"] == {"dtype": "torch.float32", "use_dynamic_shapes": "False"}
    (audio,) = run.records("torchaudio")
    assert (audio["flow"], audio["status"]) == ("portable", "skip_unsupported")
    assert audio["error"].startswith(
        "executorch.backends.test.suite.models.test_torchaudio does not import here: "
        "ModuleNotFoundError: No module named 'torchaudio'")
    (missing,) = run.records("missing")
    assert (missing["flow"], missing["status"]) == ("portable", "skip_unsupported")
    assert "test_no_such_module does not import here: ModuleNotFoundError" in missing["error"]


def test_the_upstream_suite_is_collected_only_when_a_path_points_into_it(pytester, run_suite):
    plant(pytester, {"test_up": "def test_up(test_runner):\n    pass\n"})
    (pytester.path / "backends/suite/models").mkdir(parents=True)
    (pytester.path / "backends/suite/models/test_m.py").write_text(
        "def test_m(test_runner):\n    pass\n")
    args = ("--backend", "portable", "--flow", "portable", "-p", "no:xdist", "--collect-only",
            "-q")

    def collected(*paths: str) -> list[str]:
        run = run_suite(*paths, *args)
        assert run.ret == 0, run.stdout
        return sorted(line for line in run.stdout.splitlines() if "::" in line)

    models = ["backends/suite/models/test_m.py::test_m[portable]"]
    up = [f"{UPSTREAM}/test_up.py::test_up[portable]"]
    assert collected() == collected("backends/suite") == models
    assert collected(UPSTREAM) == collected(f"{UPSTREAM}/test_up.py::test_up") == up
    assert collected("backends/suite/models", UPSTREAM) == models + up
