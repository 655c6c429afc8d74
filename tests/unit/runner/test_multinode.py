"""The multi-node checks: mpirun's command, rank results, and Context.mpirun's verdicts, with a
stand-in mpirun on PATH (the real Open MPI runs in the CI image: tests/integration)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from ngc_builder.runner import mpilaunch, multinode
from ngc_builder.runner.context import CheckFailed, CheckSkipped, Context, RunEnv

pytestmark = pytest.mark.unit

# What mpirun does for a local job, reduced to what the worker reads: N processes, each with
# its rank and the world's size, and the -x variables exported.
FAKE_MPIRUN = """#!/bin/sh
np=1
while [ $# -gt 0 ]; do
  case "$1" in
    -np) np=$2; shift 2 ;;
    -x) export "$2"; shift 2 ;;
    --bind-to) shift 2 ;;
    -*) shift ;;
    *) break ;;
  esac
done
rank=0
while [ $rank -lt $np ]; do
  OMPI_COMM_WORLD_RANK=$rank OMPI_COMM_WORLD_SIZE=$np "$@" &
  rank=$((rank + 1))
done
status=0
for job in $(jobs -p); do wait $job || status=$?; done
exit $status
"""


@pytest.fixture
def fake_mpirun(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    script = tmp_path / "bin" / "mpirun"
    script.parent.mkdir()
    script.write_text(FAKE_MPIRUN)
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{script.parent}{os.pathsep}{os.environ['PATH']}")
    return script


def context(host_mode: bool = False) -> Context:
    return Context(RunEnv({"stack": "mini"}, "none", False, False, host_mode=host_mode), "t")


def test_the_command_allows_root_only_when_root_and_names_the_coordinator() -> None:
    command = mpilaunch.mpirun_command(Path("/w.py"), 2, 12345)
    assert command[:1] == ["mpirun"] and "-np" in command and "2" in command
    assert ("--allow-run-as-root" in command) == (os.geteuid() == 0)
    assert "NGC_COORDINATOR=127.0.0.1:12345" in command
    assert command[-3:] == ["-m", "ngc_builder.runner.multinode_worker", "/w.py"]


def test_rank_results_are_read_from_marked_lines_only() -> None:
    output = 'noise\n@@ngc-rank 1 {"rank": 1}\n[Gloo] chatter\n@@ngc-rank 0 {"rank": 0}\n'
    assert mpilaunch.rank_results(output) == {0: {"rank": 0}, 1: {"rank": 1}}


def test_two_ranks_of_one_world_pass_the_launch_check(fake_mpirun: Path) -> None:
    assert "ranks 0 and 1" in multinode.check_mpirun(context())


def test_a_worker_that_fails_in_one_rank_fails_the_job_with_its_error(
    fake_mpirun: Path, tmp_path: Path,
) -> None:
    worker = tmp_path / "worker.py"
    worker.write_text("def main(rank, size, coordinator):\n"
                      "    if rank == 1:\n        raise RuntimeError('gloo: connection refused')\n"
                      "    return rank\n")
    with pytest.raises(CheckFailed, match=r"1 rank result.*gloo: connection refused"):
        context().mpirun(str(worker))


def test_a_worker_s_results_come_back_in_rank_order(fake_mpirun: Path, tmp_path: Path) -> None:
    worker = tmp_path / "worker.py"
    worker.write_text("def main(rank, size, coordinator):\n"
                      "    return {'rank': rank, 'size': size, 'at': coordinator}\n")
    results = context().mpirun(str(worker))
    assert [result["rank"] for result in results] == [0, 1]
    assert {result["size"] for result in results} == {2}
    assert results[0]["at"].startswith("127.0.0.1:")


def test_no_mpirun_fails_an_image_and_skips_a_host(monkeypatch: pytest.MonkeyPatch,
                                                   tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(CheckFailed, match="mpirun is not installed"):
        context().mpirun("/w.py")
    with pytest.raises(CheckSkipped, match="host mode: mpirun is not installed"):
        context(host_mode=True).mpirun("/w.py")


def test_missing_rdma_libraries_are_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(multinode, "LIBRARIES", {"libngc-absent.so.9": "UCX"})
    monkeypatch.setattr(multinode, "PROVIDERS", "/nonexistent/libmlx5-rdmav*.so")
    with pytest.raises(CheckFailed, match=r"missing: UCX \(libngc-absent.so.9\), the mlx5"):
        multinode.check_userspace(context())
