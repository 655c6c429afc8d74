"""The GPU-node command without a GPU: what is not installed is skipped with its reason, the
command itself needs nothing but the standard library, bad input exits 2 in one line."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ngc_builder.commands.gpunode import main
from tests.conftest import REPO

pytestmark = pytest.mark.unit


def project_without_frameworks_installed(tmp_path: Path) -> Path:
    """frameworks/pytorch, renamed to a module no interpreter has (the test machine's python3
    may import torch; this must not depend on it)."""
    root = tmp_path / "project"
    shutil.copytree(REPO / "frameworks" / "pytorch", root / "frameworks" / "pytorch")
    yaml = root / "frameworks" / "pytorch" / "framework.yaml"
    yaml.write_text(yaml.read_text().replace("import_name: torch", "import_name: ngc_absent"))
    return root


def test_a_framework_no_interpreter_imports_is_skipped_and_exit_0(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = project_without_frameworks_installed(tmp_path)
    code = main(["--root", str(root), "--framework", "pytorch", "--out", str(tmp_path / "o"),
                 "--json"])
    document = json.loads(capsys.readouterr().out)
    assert code == 0
    run = document["frameworks"]["pytorch"]
    assert run["interpreter"] is None
    assert [(c["id"], c["status"]) for c in run["checks"]] == [("framework.import", "skip")]
    assert "no interpreter imports ngc_absent" in run["checks"][0]["message"]
    assert (tmp_path / "o" / "host-pytorch.validation.json").is_file()
    assert (tmp_path / "o" / "t1-preflight.json").is_file()


def test_it_runs_under_a_python_without_any_of_our_dependencies(tmp_path: Path) -> None:
    root = project_without_frameworks_installed(tmp_path)
    # -S: no site-packages at all, so pydantic, docker, click and yaml cannot be imported.
    done = subprocess.run([sys.executable, "-S", "-m", "ngc_builder.commands.gpunode",
                           "--root", str(root), "--framework", "pytorch", "--out",
                           str(tmp_path / "o")], capture_output=True, text=True, cwd=REPO,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert "skipped: not installed here" in done.stdout


def test_under_ngc_gpu_required_a_node_without_nvml_fails(tmp_path: Path) -> None:
    root = project_without_frameworks_installed(tmp_path)
    # -S: no site-packages, so no nvidia-ml-py whatever this machine has installed.
    done = subprocess.run([sys.executable, "-S", "-m", "ngc_builder.commands.gpunode",
                           "--root", str(root), "--framework", "pytorch", "--out",
                           str(tmp_path / "o")], capture_output=True, text=True, cwd=REPO,
                          check=False, env={"NGC_GPU": "required", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 1, done.stderr
    assert ("fail T1 t1.nvml: no GPU, but NGC_GPU=required: nvidia-ml-py is not installed"
            in done.stdout)


@pytest.mark.parametrize(("args", "named"), [
    (["--framework", "nope"], "frameworks/nope"),
    (["--framework", "pytorch", "--baselines", "{bad}"], "gpu.json"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          args: list[str], named: str) -> None:
    bad = tmp_path / "gpu.json"
    bad.write_text("{not json")
    args = [str(bad) if a == "{bad}" else a for a in args]
    code = main(["--root", str(project_without_frameworks_installed(tmp_path)),
                 "--out", str(tmp_path / "o"), *args])
    err = capsys.readouterr().err
    assert code == 2 and named in err and len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


def test_an_unknown_gpu_mode_is_an_input_error(monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("NGC_GPU", "sometimes")
    assert main(["--framework", "pytorch"]) == 2
    assert "NGC_GPU" in capsys.readouterr().err
