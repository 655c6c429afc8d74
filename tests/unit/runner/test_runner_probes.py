"""The real framework probes, run in-process where the framework is installed (else skipped).

The builder's own venv has neither torch nor jax, so CI skips these: there the same probes run
for real inside the CI JAX image (tests/integration/test_validate.py), and on a GPU node with
both frameworks `make gpu-node` runs them in host mode."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path
from typing import Any

import pytest

from ngc_builder.runner import core
from ngc_builder.runner.run import run

pytestmark = pytest.mark.unit
FRAMEWORKS = Path(__file__).resolve().parents[3] / "frameworks"
CASES = {"jax": ("jax", "jax"), "pytorch": ("torch", "torch")}


@pytest.fixture(params=sorted(CASES))
def framework(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    name = request.param
    module, distribution = CASES[name]
    pytest.importorskip(module)
    monkeypatch.setattr(core, "check_pip", lambda ctx: "stubbed")
    version = importlib.metadata.version(distribution)
    return {
        "image": name,
        "framework": name,
        "probe": name,
        "distribution": distribution,
        "version": version,
    }


def statuses(report: Any) -> dict[str, tuple[str, str, Any]]:
    return {c.id: (c.status, c.message, c.fault) for c in report.checks}


def test_cpu_checks_pass_and_gpu_checks_skip(framework: dict[str, Any]) -> None:
    report = run(framework, FRAMEWORKS, "none", visible=False)
    got = statuses(report)
    assert report.verdict == "pass", got
    gpu_checks = [cid for cid in got if ".gpu." in cid]
    assert len(gpu_checks) >= 3, gpu_checks  # jax registers 5, pytorch 7
    assert all(got[cid][:2] == ("skip", "no GPU") for cid in gpu_checks)
    assert any(cid.endswith("train_cpu") and got[cid][0] == "pass" for cid in got)


def test_required_gpu_without_one_is_a_failure_not_a_pass(framework: dict[str, Any]) -> None:
    report = run(framework, FRAMEWORKS, "required", visible=False)
    got = statuses(report)
    gpu_checks = [cid for cid in got if ".gpu." in cid]
    assert len(gpu_checks) >= 3, gpu_checks  # all() of nothing would pass
    assert all(got[cid][0] == "fail" and "CPU fallback" in got[cid][1] for cid in gpu_checks), got


def test_wrong_version_expectation_fails(framework: dict[str, Any]) -> None:
    report = run({**framework, "version": "0.0.1"}, FRAMEWORKS, "none", visible=False)
    status, message, _ = statuses(report)["framework.version"]
    assert status == "fail" and "expected 0.0.1" in message
    assert report.verdict == "fail"
