"""pip's install report read as locked wheels; pip's failures as one line."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest

from ngc_builder.lock.models import PipPackage
from ngc_builder.lock.pip import ResolutionError, packages_of, pip_error, resolve_pip
from ngc_builder.manifest.wheels import Target
from tests.unit.locks import sha, wheel

pytestmark = pytest.mark.unit
TARGET = Target("3.13", "2.41")


def item(name: str, version: str, url: str, archive: dict[str, object]) -> dict[str, object]:
    return {"metadata": {"name": name, "version": version},
            "download_info": {"url": url, "archive_info": archive}}


def test_report_gives_name_version_file_and_hash(tmp_path: Path) -> None:
    local = tmp_path / "Six-1.17.0-py2.py3-none-any.whl"
    local.write_bytes(b"a wheel")
    report = {"install": [
        item("NumPy", "2.5.5", "https://files.example/n/numpy-2.5.5-cp313-cp313-manylinux_2_27"
             "_x86_64.whl", {"hashes": {"sha256": sha("numpy")}}),
        item("ml_dtypes", "0.6.0", "https://files.example/ml_dtypes-0.6.0-cp313-cp313-any.whl",
             {"hash": f"sha256={sha('ml')}"}),
        item("six", "1.17.0", local.as_uri(), {}),
    ]}
    found = packages_of(report)
    assert [(p.name, p.version) for p in found] == [
        ("ml-dtypes", "0.6.0"), ("numpy", "2.5.5"), ("six", "1.17.0")]
    assert found[1].file == "numpy-2.5.5-cp313-cp313-manylinux_2_27_x86_64.whl"
    assert found[0].sha256 == sha("ml")
    assert found[2].sha256 == hashlib.sha256(b"a wheel").hexdigest()


def test_a_remote_file_without_hash_is_refused() -> None:
    report = {"install": [item("x", "1.0", "https://files.example/x-1.0-py3-none-any.whl", {})]}
    with pytest.raises(ResolutionError, match="no sha256"):
        packages_of(report)


def test_resolution_keeps_the_parents_versions_and_leaves_them_out() -> None:
    parent = [wheel("nvidia-cuda-runtime", "13.2.86")]
    seen: list[str] = []

    def run(arguments: list[str]) -> subprocess.CompletedProcess[str]:
        constraints = Path(arguments[arguments.index("-c") + 1]).read_text()
        seen.append(constraints)
        assert "--python-version" in arguments and "3.13" in arguments
        report = {"install": [
            item("nvidia-cuda-runtime", "13.2.86", "https://f/nvidia_cuda_runtime-13.2.86-py3"
                 "-none-any.whl", {"hashes": {"sha256": sha("n")}}),
            item("jax", "0.12.0", "https://f/jax-0.12.0-py3-none-any.whl",
                 {"hashes": {"sha256": sha("j")}})]}
        return subprocess.CompletedProcess(arguments, 0, json.dumps(report), "")

    found = resolve_pip(["jax==0.12.0"], TARGET, parent, run)
    assert seen == ["nvidia-cuda-runtime==13.2.86\n"]
    assert found == [PipPackage(name="jax", version="0.12.0", file="jax-0.12.0-py3-none-any.whl",
                                sha256=sha("j"))]


def test_a_failed_resolution_is_pips_last_error() -> None:
    def run(arguments: list[str]) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(arguments, 1, "", "Looking in indexes\nERROR: first\n"
                                           "ERROR: No matching distribution found for cntk==2.7\n")

    with pytest.raises(ResolutionError) as caught:
        resolve_pip(["cntk==2.7"], TARGET, [], run)
    assert str(caught.value) == "ERROR: No matching distribution found for cntk==2.7"
    assert pip_error("") == "pip failed with no output"


def test_nothing_to_resolve_asks_nothing() -> None:
    def run(arguments: list[str]) -> subprocess.CompletedProcess[str]:
        raise AssertionError("pip must not run")

    assert resolve_pip([], TARGET, [], run) == []
