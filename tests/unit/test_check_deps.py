"""ci/check_deps.py: the builder's lock against pyproject.toml and the tree's imports."""

from __future__ import annotations

from pathlib import Path

import pytest

from ci.check_deps import LOCK, diff, import_problems, pins, range_problems
from tests.conftest import REPO

pytestmark = pytest.mark.unit
PYPROJECT = REPO / "pyproject.toml"


def test_the_repositorys_lock_covers_pyproject_and_every_import() -> None:
    locked = pins(LOCK)
    assert {"pyyaml", "pydantic", "docker", "pytest", "pip-tools"} <= locked.keys()
    assert list(range_problems(locked, PYPROJECT)) == []
    assert list(import_problems(locked, REPO)) == []


def test_a_requirement_left_out_or_pinned_outside_its_range_is_named() -> None:
    locked = pins(LOCK)
    del locked["pydantic"]
    locked["pyyaml"] = "5.4.1"
    assert list(range_problems(locked, PYPROJECT)) == [
        "builder.txt: pydantic: asked by pyproject.toml, not pinned",
        "builder.txt: pyyaml==5.4.1: outside pyproject.toml's >=6.0 (run `make deps-update`)"]


def test_an_import_no_locked_distribution_has_is_named(tmp_path: Path) -> None:
    code = tmp_path / "ngc_builder"
    (code / "runner").mkdir(parents=True)
    (code / "uses.py").write_text(
        "import json\nimport leftpad.core\nfrom yaml import safe_load\n"
        "try:\n    import pynvml\nexcept ImportError:\n    pynvml = None\n")
    (code / "runner" / "probe.py").write_text("import os\nfrom . import banner\nimport yaml\n")
    assert list(import_problems(pins(LOCK), tmp_path)) == [
        "ngc_builder/runner/probe.py:3: imports yaml: the runner may import the standard "
        "library only (it runs in bare images)",
        "ngc_builder/uses.py:2: imports leftpad, which no locked distribution has"]


def test_the_diff_names_what_moved(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    old, new = tmp_path / "old.txt", tmp_path / "new.txt"
    old.write_text("click==8.1.0 \\\n    --hash=sha256:00\nsix==1.16.0\npyyaml==6.0.3\n")
    new.write_text("click==8.1.0\npyyaml==6.0.4 \\\n    --hash=sha256:11\nrich==15.0.0\n")
    assert diff(old, new) == 0
    assert capsys.readouterr().out.splitlines() == [
        "+ rich==15.0.0", "- six==1.16.0", "~ pyyaml 6.0.3 -> 6.0.4"]
