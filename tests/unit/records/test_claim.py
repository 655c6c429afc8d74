"""One run per build dir and release: a second one exits 2 naming the holder; a lock left by
a run that died is taken over, and said so."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from ngc_builder.cli import main
from ngc_builder.errors import InputError
from ngc_builder.records.claim import CLAIM_NAME, claim_release_dir
from tests.conftest import WriteRelease
from tests.unit.conftest import GOOD_RELEASE

pytestmark = pytest.mark.unit


def test_a_second_holder_is_refused_with_the_first_ones_pid(tmp_path: Path) -> None:
    said: list[str] = []
    with claim_release_dir(tmp_path, said.append), pytest.raises(InputError) as caught, \
            claim_release_dir(tmp_path, said.append):
        pytest.fail("a second holder got the lock")
    [problem] = caught.value.problems
    assert problem.file == str(tmp_path / CLAIM_NAME) and problem.field == "(claim)"
    assert f"in use by ngc-builder PID {os.getpid()} since 20" in problem.message
    assert said == []


def test_a_clean_end_leaves_nothing_to_take_over(tmp_path: Path) -> None:
    said: list[str] = []
    with claim_release_dir(tmp_path, said.append):
        pass
    with claim_release_dir(tmp_path, said.append):
        pass
    assert said == [] and (tmp_path / CLAIM_NAME).read_text() == ""


def test_the_lock_of_a_run_that_died_is_taken_over_and_said(tmp_path: Path) -> None:
    # A run killed with SIGKILL leaves its line; the kernel has dropped its flock.
    (tmp_path / CLAIM_NAME).write_text("ngc-builder PID 4242 since 2026-11-22T10:00:00Z")
    said: list[str] = []
    with claim_release_dir(tmp_path, said.append):
        held = (tmp_path / CLAIM_NAME).read_text()
    assert said == ["took over the claim of ngc-builder PID 4242 since 2026-11-22T10:00:00Z, "
                    "which ended without releasing it"]
    assert held.startswith(f"ngc-builder PID {os.getpid()} since ")


def test_release_on_a_build_dir_in_use_exits_2_and_touches_nothing(
    write_release: WriteRelease, tmp_path: Path,
) -> None:
    build = tmp_path / "build"
    with claim_release_dir(build / "26.11", lambda _: None):
        result = CliRunner().invoke(main, ["release", str(write_release(GOOD_RELEASE)),
                                           "--offline", "--build-dir", str(build)])
    assert result.exit_code == 2, result.output
    assert "(claim): " in result.stderr and f"PID {os.getpid()}" in result.stderr
    assert sorted(p.name for p in (build / "26.11").iterdir()) == [CLAIM_NAME]
