"""The probes' Protocols (runner/probe_api.py) hold to the real Suite and Context, and name
exactly what the probes use: mypy checks the probes against the Protocols alone, so a Protocol
that drifted from the runner would let a broken probe through."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path
from typing import get_args

import pytest

from ngc_builder.runner import numeric, probe_api
from ngc_builder.runner.context import Context, RunEnv
from ngc_builder.runner.probe_api import ProbeContext, ProbeSuite
from ngc_builder.runner.report import FAULTS
from ngc_builder.runner.suite import Suite

pytestmark = pytest.mark.unit
PROBES = sorted((Path(__file__).resolve().parents[3] / "frameworks").glob("*/probe*.py"))
# The name each probe gives the runner's objects, and the Protocol that types it.
PROTOCOLS: dict[str, type] = {"ctx": ProbeContext, "suite": ProbeSuite}


def real_context() -> Context:
    env = RunEnv(expect={}, gpu_mode="none", gpu_expected=False, gpu_visible=False)
    return Context(env, "probe_api.test")


def test_suite_and_context_satisfy_the_protocols() -> None:
    # The annotated assignments are mypy's half (`make lint`); isinstance checks at run time
    # that every member, attributes included, is there.
    suite: ProbeSuite = Suite()
    ctx: ProbeContext = real_context()
    assert isinstance(suite, ProbeSuite)
    assert isinstance(ctx, ProbeContext)


def test_the_copied_types_match_the_runner() -> None:
    assert get_args(probe_api.Fault) == FAULTS
    assert probe_api.Rows == numeric.Rows


def test_probe_api_loads_on_its_own() -> None:
    # mypy finds it as the top-level `probe_api` (mypy_path): a relative import would fail there.
    spec = importlib.util.spec_from_file_location("probe_api", probe_api.__file__)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.ProbeContext.__name__ == "ProbeContext"


def members(protocol: type) -> set[str]:
    return {name for name in vars(protocol) if not name.startswith("_")}


def used_by_probes(name: str) -> set[str]:
    used: set[str] = set()
    for path in PROBES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                    and node.value.id == name:
                used.add(node.attr)
    return used


@pytest.mark.parametrize("name", sorted(PROTOCOLS))
def test_the_protocols_name_exactly_what_probes_use(name: str) -> None:
    # More than the probes use would bind the runner for nothing; less, mypy reports.
    assert members(PROTOCOLS[name]) == used_by_probes(name)


@pytest.mark.parametrize("path", PROBES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_probes_type_what_the_runner_hands_them(path: Path) -> None:
    # `ctx: Any` would pass mypy and check nothing: the boundary must stay typed.
    expected = {name: protocol.__name__ for name, protocol in PROTOCOLS.items()}
    wrong = [f"{path.name}:{arg.lineno}: {arg.arg}: {ast.unparse(arg.annotation)}"
             for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
             for arg in node.args.args + node.args.kwonlyargs
             if arg.arg in expected and arg.annotation is not None
             and ast.unparse(arg.annotation) != expected[arg.arg]]
    assert wrong == []
