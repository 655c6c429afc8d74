"""The JAX probe's TF32 proof on a fake jax: TF32 asked for by name, and shown in the error."""

from __future__ import annotations

import sys
from types import ModuleType

import pytest

from ngc_builder.runner.report import CheckResult
from tests.unit.probes.fake_jax import Device, FakeJax, operands
from tests.unit.probes.probing import LoadProbe, run_gpu_check

pytestmark = pytest.mark.unit


@pytest.fixture
def probe(load_probe: LoadProbe, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    module = load_probe("jax", "probe_jax_gpu")
    monkeypatch.setattr(module, "matmul_operands", operands)
    return module


def matrix_on(
    probe: ModuleType, jax: FakeJax, monkeypatch: pytest.MonkeyPatch, device: Device
) -> CheckResult:
    monkeypatch.setitem(sys.modules, "jax", jax)
    monkeypatch.setitem(sys.modules, "jax.numpy", jax.numpy)
    return run_gpu_check(lambda ctx: probe.precision_matrix(ctx, device))


def test_tf32_is_requested_by_preset_and_proven(
    probe: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = matrix_on(probe, FakeJax(), monkeypatch, Device())
    assert result.status == "pass", result.message
    assert result.evidence["tf32.precision"] == "TF32_TF32_F32"
    assert "tf32 3.1e-04 (TF32 used" in result.message


def test_tf32_computed_as_fp32_fails_naming_tf32_off(
    probe: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = matrix_on(probe, FakeJax(honours_tf32=False), monkeypatch, Device())
    assert result.status == "fail" and result.fault == "image"
    assert "TF32 is off on cuda:0" in result.message and "2.6e-07" in result.message


def test_jax_without_presets_asks_for_default(
    probe: ModuleType, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = matrix_on(probe, FakeJax(presets=False), monkeypatch, Device())
    assert result.status == "pass", result.message
    assert result.evidence["tf32.precision"] == "DEFAULT"


@pytest.mark.parametrize("device,reason", [
    (Device("cpu", None), "no TF32 on cpu"),
    (Device(compute_capability="7.5"), "sm_75 has no TF32"),
    (Device(compute_capability=None), "compute capability None unknown"),
])
def test_tf32_is_neither_asked_for_nor_claimed_without_it(
    probe: ModuleType, monkeypatch: pytest.MonkeyPatch, device: Device, reason: str
) -> None:
    jax = FakeJax()
    result = matrix_on(probe, jax, monkeypatch, device)
    assert result.status == "pass", result.message
    assert f"tf32 not applicable ({reason}" in result.message
    assert "TF32_TF32_F32" not in jax.requested
