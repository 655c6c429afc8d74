"""Host mode validates the environment it is given, and nothing of the builder: a separate
venv, validated from the project root after `make setup`, has a clean `pip check` and cannot
import ngc_builder (only the runner is shipped to it, as images get it)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.integration

PROBE = '''IMPORT_NAME = "json"


def register(suite):
    suite.check("isolation.no_builder", tier="T0")(no_builder)


def no_builder(ctx):
    import importlib.util
    import sys
    assert importlib.util.find_spec("ngc_builder") is None, "ngc_builder is importable"
    leaked = [p for p in sys.path if p and ("{repo}" == p or p.startswith("{repo}/"))]
    assert not leaked, f"project paths on sys.path: {{leaked}}"
    return "the builder is not part of this environment"
'''


def _framework_root(tmp_path: Path) -> Path:
    folder = tmp_path / "root" / "frameworks" / "stdjson"
    folder.mkdir(parents=True)
    (folder / "framework.yaml").write_text("name: stdjson\ntitle: stdjson\nimport_name: json\n"
                                           "distribution: null\npython: \">=3.9\"\n"
                                           "cuda_major: null\nrequirements:\n  default: []\n",
                                           encoding="utf-8")
    (folder / "probe.py").write_text(PROBE.format(repo=REPO), encoding="utf-8")
    return tmp_path / "root"


@pytest.mark.parametrize("pythonpath", [None, str(REPO)], ids=["plain", "checkout-on-pythonpath"])
def test_a_separate_venv_validated_from_the_project_root_sees_none_of_the_builder(
    tmp_path: Path, pythonpath: str | None,
) -> None:
    venv = tmp_path / "venv"
    # The system's Python, not this venv's: the environment under test is the user's own.
    subprocess.run(["python3", "-m", "venv", str(venv)], check=True, timeout=300,
                   env={**os.environ, "PATH": "/usr/bin:/bin"})
    root = _framework_root(tmp_path)
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    if pythonpath is not None:  # a CI job that put the checkout there for the CLI
        env["PYTHONPATH"] = pythonpath
    done = subprocess.run(
        [str(REPO / ".venv" / "bin" / "ngc-builder"), "validate", "--host", "--framework",
         "stdjson", "--python", str(venv / "bin" / "python"), "--root", str(root),
         "--out", str(tmp_path / "out"), "--json"],
        capture_output=True, text=True, check=False, cwd=REPO, env=env, timeout=600)
    report = json.loads(done.stdout)
    checks = {check["id"]: check for check in report["checks"]}
    assert checks["pip.check"]["status"] == "pass", checks["pip.check"]
    assert "ngc-builder" not in json.dumps(checks["pip.check"])
    assert checks["isolation.no_builder"]["status"] == "pass", checks["isolation.no_builder"]
    assert checks["framework.import"]["status"] == "pass"
