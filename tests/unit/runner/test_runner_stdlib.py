"""The runner ships into bare images as ``ngc_runner``: stdlib only, relative imports only."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit
RUNNER = Path(__file__).resolve().parents[3] / "ngc_builder" / "runner"
PROBES = sorted((Path(__file__).resolve().parents[3] / "frameworks").glob("*/probe.py"))
FRAMEWORK_MODULES = {"jax", "torch", "numpy"}


def absolute_imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.parametrize("path", sorted(RUNNER.glob("*.py")), ids=lambda p: p.name)
def test_runner_modules_import_only_the_stdlib(path: Path) -> None:
    assert absolute_imports(path) - set(sys.stdlib_module_names) == set()


@pytest.mark.parametrize("path", PROBES, ids=lambda p: p.parent.name)
def test_probes_import_only_stdlib_and_frameworks(path: Path) -> None:
    assert absolute_imports(path) - set(sys.stdlib_module_names) - FRAMEWORK_MODULES == set()


@pytest.mark.parametrize("path", sorted(RUNNER.glob("*.py")), ids=lambda p: p.name)
def test_runner_modules_stay_small(path: Path) -> None:
    assert len(path.read_text(encoding="utf-8").splitlines()) <= 300
