"""The emulated tier (runner/scope.py): under emulation only T0 and the checks a probe marks
`emulated=True` run; the rest are skipped with the reason, never passed."""

from __future__ import annotations

from pathlib import Path

import pytest

from ngc_builder.runner.framework import load_probe
from ngc_builder.runner.scope import resolve_scope
from ngc_builder.runner.suite import Context, RunEnv, Suite, run_checks
from tests.unit.runner.test_runner_cli import args_for, document, image_dirs, runner

__all__ = ["image_dirs"]  # the fixture, shared with the runner CLI tests

pytestmark = pytest.mark.unit
FRAMEWORKS = Path(__file__).resolve().parents[3] / "frameworks"


def _suite(ran: list[str]) -> Suite:
    suite = Suite()

    def record(ctx: Context) -> str:
        ran.append(ctx.check_id)
        return "ran"
    suite.check("static", tier="T0")(record)
    suite.check("numerics", tier="T2")(record)
    suite.check("one_op", tier="T2", emulated=True)(record)
    suite.check("static_but_slow", tier="T0", emulated=False)(record)
    suite.check("bench", tier="T3")(record)
    suite.check("gpu_op", tier="T2", needs_gpu=True)(record)
    return suite


def _run(scope: str) -> tuple[list[str], dict[str, tuple[str, str]]]:
    ran: list[str] = []
    results = run_checks(_suite(ran), RunEnv({}, "none", False, False, scope=scope))
    return ran, {result.id: (result.status, result.message) for result in results}


def test_the_emulated_tier_runs_t0_and_the_marked_checks_and_skips_the_rest() -> None:
    ran, results = _run("emulated")
    assert ran == ["static", "one_op"]
    for skipped in ("numerics", "static_but_slow", "bench"):
        status, message = results[skipped]
        assert status == "skip" and message.startswith("not in the emulated tier")
        assert "native" in message
    assert results["gpu_op"] == ("skip", "no GPU")  # a GPU check says why first


def test_the_full_tier_runs_every_check() -> None:
    ran, results = _run("full")
    assert ran == ["static", "numerics", "one_op", "static_but_slow", "bench"]
    assert {status for name, (status, _) in results.items() if name != "gpu_op"} == {"pass"}
    assert results["gpu_op"] == ("skip", "no GPU")


def test_the_scope_comes_from_the_flag_then_the_environment() -> None:
    assert resolve_scope(None, {}) == "full"
    assert resolve_scope(None, {"NGC_SCOPE": "emulated"}) == "emulated"
    assert resolve_scope("full", {"NGC_SCOPE": "emulated"}) == "full"
    with pytest.raises(ValueError, match="scope must be one of full, emulated"):
        resolve_scope(None, {"NGC_SCOPE": "quick"})


def test_an_unknown_scope_is_bad_input(image_dirs: tuple[Path, Path]) -> None:
    proc = runner(args_for(image_dirs), env={"NGC_SCOPE": "quick"})
    assert proc.returncode == 2 and "scope must be one of" in proc.stderr
    assert document(proc)["verdict"] == "error"


def test_the_report_says_its_scope(image_dirs: tuple[Path, Path]) -> None:
    proc = runner(args_for(image_dirs, "--scope", "emulated"))
    data = document(proc)
    assert data["environment"]["scope"] == "emulated"
    statuses = {check["id"]: check["status"] for check in data["checks"]}
    assert statuses["framework.import"] == "pass" and statuses["noisy.print"] == "skip"


@pytest.mark.parametrize("name", sorted(path.parent.name for path in
                                        FRAMEWORKS.glob("*/probe.py")))
def test_each_framework_marks_one_small_operation_for_the_emulated_tier(name: str) -> None:
    """Every framework whose probe has CPU checks beyond T0 keeps exactly one of them under
    emulation: the platform's own kernels run once, its numerics wait for a native node."""
    probe = load_probe(FRAMEWORKS, name, name)
    assert probe.error is None
    cpu_checks = [check for check in probe.checks.checks
                  if not check.needs_gpu and check.tier in ("T2", "T3")]
    marked = [check.id for check in cpu_checks if check.in_emulated_tier]
    servers_only = all("server" in check.id for check in cpu_checks)
    assert len(marked) == (0 if servers_only else 1), (name, marked)
