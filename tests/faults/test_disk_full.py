"""The build dir's filesystem full mid-run (a real tmpfs, filled while an image validates):
one line naming image and step, no traceback, the record on disk the last one saved whole;
after space is freed, the rerun resumes from it."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.faults.disks import fill, free, small_fs
from tests.faults.project import slow_project
from tests.faults.running import Release, namespace

pytestmark = pytest.mark.faults


def test_build_dir_full_mid_validation_fails_the_image_in_one_line_and_the_rerun_resumes(
    tmp_path: Path,
) -> None:
    project = slow_project(tmp_path / "project", validate_seconds=8)
    with small_fs(tmp_path / "disk", "64m") as disk:
        run = Release(project.manifest, namespace("faults-disk"), disk / "build")
        run.env = {"NGC_RETRIES": "2", "NGC_RETRY_WAIT": "0.5"}
        # stderr and stdout live outside the full disk, as a CI runner's log does.
        run.stderr_file_override = tmp_path / "run.stderr"
        run.start()
        run.wait_for("slow: validating")
        fill(disk)
        code = run.finish(timeout=300)
        said = run.stderr()
        assert code == 1, said[-3000:]
        assert "Traceback" not in said and "internal error" not in said
        assert "!!! slow: validate: " in said and "No space left on device" in said
        before = run.record()  # whole JSON: the last record saved before the disk filled
        assert before["images"]["slow"]["build"]["status"] == "ok"
        assert before["images"]["slow"]["push"]["digest"] is None
        assert not list((disk / "build" / "26.11").glob(".release.json.*.tmp"))
        free(disk)
        time.sleep(0.5)
        assert run.run(timeout=600) == 0, run.stderr()[-3000:]
    after = json.loads(run.stdout_file.read_text())["images"]
    assert after["slow"]["build"]["reused"] is True
    assert after["slow"]["validation"]["status"] == "ok"
    assert after["cuda-mini"]["push"]["reused"] is True
