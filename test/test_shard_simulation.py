"""Proof by simulation: a real selection of portable operator cases, run unsharded and
as three shards one after the other, merges into exactly the same cases with the same
statuses, the summary sees one complete sharded run, and the balance report reads
the shards' plans."""

from pathlib import Path

import pytest

from conftest import run_forked
from etsuite.tools.bench import shard_balance
from etsuite.tools.report import loading
from etsuite.tools.report.sections import matrix
from etsuite.tools.report.sharded_runs import sharded_runs

ROOT = Path(__file__).resolve().parent.parent
SELECTION = ["backends/suite/operators/test_add.py", "backends/suite/operators/test_relu.py"]


def run_pytest(report: Path, *extra) -> pytest.RunResult:
    """The selection in this repository (its setup.cfg), in a forked child."""
    return run_forked(ROOT, *SELECTION, "--backend", "portable", "-n", "0",
                      "--run-id", "simulation", "--seed", "1234", "-p", "no:cacheprovider",
                      "--json-report", f"--json-report-file={report}", *extra, timeout=1500,
                      scratch=report.parent)


@pytest.mark.slow
def test_three_shards_merge_into_the_unsharded_run(tmp_path, capsys):
    whole_path = tmp_path / "portable.json"
    done = run_pytest(whole_path)
    assert done.ret == 0, done.stdout.str()[-3000:]
    shard_paths = []
    for k in (1, 2, 3):
        path = tmp_path / f"portable-shard{k}of3.json"
        done = run_pytest(path, "--shard", f"{k}/3")
        assert done.ret == 0, done.stdout.str()[-3000:]
        shard_paths.append(str(path))

    whole = loading.load_all([str(whole_path)])
    merged = loading.load_all(shard_paths)
    assert len(whole.results) == 7  # 4 add cases, 3 relu cases
    assert all(run.tests for run in merged.runs)  # no shard was empty
    assert not merged.duplicates  # disjoint
    assert {r.nodeid: r.status for r in merged.results} == \
        {r.nodeid: r.status for r in whole.results}
    # The summary's support matrix (case by case, flow by flow) is the same.
    assert matrix.support_matrix(merged.results) == matrix.support_matrix(whole.results)

    (group,) = sharded_runs(merged.runs)
    assert (group.id, group.count, group.missing) == ("simulation", 3, [])
    assert group.plan["items"] == 7
    assert shard_balance.main([*shard_paths, "--unsharded", str(whole_path)]) == 0
    out = capsys.readouterr().out
    assert "The same 7 tests with the same statuses." in out
    assert out.count("| 1/3 ") + out.count("| 2/3 ") + out.count("| 3/3 ") == 3
