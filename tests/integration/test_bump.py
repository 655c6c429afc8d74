"""`ngc-builder bump` against the real index and the real engine: the proposed release passes
`check` with the stack check online, its plan stands on the same OS images as 26.11's, and
the layers below the frameworks keep their keys."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

# The live index and PyPI's metadata for every stack: 2 to 2.5 minutes, on demand (`make
# test-extended`, docs/testing.md); CI bumps against recorded index answers (tests/unit/bump).
pytestmark = [pytest.mark.integration, pytest.mark.extended]


def cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # This checkout's package, whatever the interpreter has installed.
    return subprocess.run([sys.executable, "-m", "ngc_builder", *args], capture_output=True,
                          text=True, check=False, cwd=root, timeout=3000,
                          env={**os.environ, "PYTHONPATH": str(REPO)})


def os_images(plan: dict[str, object]) -> dict[str, str]:
    images = plan["images"]
    assert isinstance(images, list)
    return {image["image"]: image["parent"] for image in images
            if str(image["parent"]).startswith("ngc-local/os-")}


def test_the_bump_passes_check_and_stands_on_the_same_os_images(tmp_path: Path) -> None:
    for folder in ("frameworks", "templates", "base-images"):
        (tmp_path / folder).symlink_to(REPO / folder)
    (tmp_path / "releases").mkdir()
    for name in ("26.11.yaml", "26.11.lock.json"):
        shutil.copy(REPO / "releases" / name, tmp_path / "releases" / name)
    bumped = cli(tmp_path, "bump", "releases/26.11.yaml", "--to", "26.12", "--report",
                 "proposal.md", "--json")
    assert bumped.returncode == 0, bumped.stdout[-2000:] + bumped.stderr[-2000:]
    result = json.loads(bumped.stdout[:bumped.stdout.rindex("}") + 1])
    assert result["ok"] is True and result["release"] == "26.11"
    assert (tmp_path / "releases" / "26.12.lock.json").is_file()
    assert "# Release 26.12: proposal (bump of 26.11)" in (tmp_path / "proposal.md").read_text()
    checked = cli(tmp_path, "check", "releases/26.12.yaml")  # the stack check online
    assert checked.returncode == 0, checked.stdout + checked.stderr
    plans = {release: json.loads(cli(tmp_path, "plan", f"releases/{release}.yaml",
                                     "--json").stdout) for release in ("26.11", "26.12")}
    old, new = os_images(plans["26.11"]), os_images(plans["26.12"])
    assert new and new == old  # the same locked OS images: nothing below the bases moved
    # The shared layers name no release: every base, and every stack the bump did not move,
    # keeps its key, so 26.12 tags the digests 26.11 published.
    keys = {release: {i["image"]: i["key"] for i in plan["images"]}
            for release, plan in plans.items()}
    unmoved = [f"cuda-{s['name']}" for s in result["stacks"]
               if not s["changes"] and s["cuda_new"] == s["cuda_old"]]
    shared = [name for name in keys["26.11"] if name.startswith("base")] + unmoved
    assert len(shared) >= 3
    assert {n: keys["26.12"][n] for n in shared} == {n: keys["26.11"][n] for n in shared}
