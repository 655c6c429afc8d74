from __future__ import annotations

import importlib
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ngc_builder.runner import core
from ngc_builder.runner.run import run

pytestmark = pytest.mark.unit

PROBE = """
IMPORT_NAME = "fakefw"

def register(suite):
    @suite.check("fakefw.cpu", tier="T2")
    def cpu(ctx):
        import fakefw
        ctx.evidence("answer", fakefw.answer())
        return "cpu ok"

    @suite.check("fakefw.gpu", tier="T2", needs_gpu=True)
    def gpu(ctx):
        import fakefw
        if not fakefw.gpus():
            ctx.cpu_fallback("fakefw sees no GPU")
        return "gpu ok"
"""


@pytest.fixture
def fakefw(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An installed ``fakefw`` 1.2.3 (module + dist-info) and its probe; yields the probes dir."""
    site = tmp_path / "site"
    (site / "fakefw").mkdir(parents=True)
    (site / "fakefw" / "__init__.py").write_text(
        '__version__ = "1.2.3"\ndef answer(): return 42\ndef gpus(): return []\n'
    )
    (site / "fakefw-1.2.3.dist-info").mkdir()
    (site / "fakefw-1.2.3.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: fakefw\nVersion: 1.2.3\n"
    )
    probes = tmp_path / "probes"
    (probes / "fakefw").mkdir(parents=True)
    (probes / "fakefw" / "probe.py").write_text(PROBE)
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setattr(
        core, "check_pip", lambda ctx: "stubbed: pip check is slow and tested elsewhere"
    )
    importlib.invalidate_caches()
    yield probes
    for name in ("fakefw", "ngc_probe_fakefw"):
        sys.modules.pop(name, None)


def expect(**overrides: Any) -> dict[str, Any]:
    return {"image": "fakefw", "framework": "fakefw", "version": "1.2.3", **overrides}


def statuses(report: Any) -> dict[str, tuple[str, str, Any]]:
    return {c.id: (c.status, c.message, c.fault) for c in report.checks}


def test_good_framework_passes_and_gpu_checks_skip(fakefw: Path) -> None:
    report = run(expect(), fakefw, "none", visible=False)
    got = statuses(report)
    assert [c.id for c in report.checks][-5:] == [
        "framework.import",
        "framework.version",
        "framework.libraries",
        "fakefw.cpu",
        "fakefw.gpu",
    ]
    assert got["framework.version"][0] == "pass"
    assert got["fakefw.cpu"] == ("pass", "cpu ok", None)
    assert got["fakefw.gpu"] == ("skip", "no GPU", None)
    assert report.verdict == "pass"


def test_probe_in_flat_layout_is_found(fakefw: Path) -> None:
    (fakefw / "fakefw.py").write_text((fakefw / "fakefw" / "probe.py").read_text())
    (fakefw / "fakefw" / "probe.py").unlink()
    assert run(expect(), fakefw, "none", visible=False).verdict == "pass"


def test_wrong_version_expectation_fails(fakefw: Path) -> None:
    report = run(expect(version="1.2.4"), fakefw, "none", visible=False)
    status, message, fault = statuses(report)["framework.version"]
    assert (status, fault) == ("fail", "image")
    assert message == "fakefw (metadata) is 1.2.3, expected 1.2.4"
    assert report.verdict == "fail"


def test_import_name_expectation_covers_a_probe_without_one(fakefw: Path) -> None:
    probe = fakefw / "fakefw" / "probe.py"
    probe.write_text(probe.read_text().replace('IMPORT_NAME = "fakefw"', ""))
    report = run(
        expect(
            framework="fake-framework", probe="fakefw", import_name="fakefw", distribution="fakefw"
        ),
        fakefw,
        "none",
        visible=False,
    )
    assert report.verdict == "pass", statuses(report)


def test_missing_distribution_fails(fakefw: Path) -> None:
    report = run(expect(distribution="fakefw-cuda"), fakefw, "none", visible=False)
    assert statuses(report)["framework.version"][:2] == (
        "fail",
        "distribution 'fakefw-cuda' is not installed",
    )


def test_required_gpu_and_framework_without_gpu_fails(fakefw: Path) -> None:
    report = run(expect(), fakefw, "required", visible=False)
    assert statuses(report)["fakefw.gpu"] == ("fail", "CPU fallback: fakefw sees no GPU", "host")
    visible = run(expect(), fakefw, "required", visible=True)
    assert statuses(visible)["fakefw.gpu"] == ("fail", "CPU fallback: fakefw sees no GPU", "image")
    assert report.verdict == "fail"


def test_auto_mode_follows_visibility(fakefw: Path) -> None:
    assert run(expect(), fakefw, "auto", visible=False).gpu_expected is False
    assert statuses(run(expect(), fakefw, "auto", visible=True))["fakefw.gpu"][0] == "fail"


def test_missing_probe_fails_import(tmp_path: Path) -> None:
    report = run(expect(), tmp_path, "none", visible=False)
    got = statuses(report)
    assert got["framework.import"][0] == "fail"
    assert "probe 'fakefw' not found" in got["framework.import"][1]
    assert got["framework.version"][:2] == ("skip", "requires framework.import (fail)")


def test_broken_probe_fails_import_without_crashing(fakefw: Path) -> None:
    (fakefw / "fakefw" / "probe.py").write_text(
        "IMPORT_NAME = 'fakefw'\ndef register(suite):\n    raise KeyError('oops')\n"
    )
    got = statuses(run(expect(), fakefw, "none", visible=False))
    assert got["framework.import"][0] == "fail"
    assert "KeyError: 'oops'" in got["framework.import"][1]


def test_unimportable_framework_skips_probe_checks(fakefw: Path) -> None:
    (fakefw / "fakefw" / "probe.py").write_text(
        PROBE.replace('IMPORT_NAME = "fakefw"', 'IMPORT_NAME = "fakefw_missing"')
    )
    got = statuses(run(expect(), fakefw, "none", visible=False))
    assert got["framework.import"][0] == "fail"
    assert "No module named 'fakefw_missing'" in got["framework.import"][1]
    assert got["fakefw.cpu"] == ("skip", "requires framework.import (fail)", None)


def test_probe_cannot_shadow_core_checks(fakefw: Path) -> None:
    probe = textwrap.dedent("""
        IMPORT_NAME = "fakefw"
        def register(suite):
            suite.check("pip.check", tier="T0")(lambda ctx: "fake pass")
    """)
    (fakefw / "fakefw" / "probe.py").write_text(probe)
    got = statuses(run(expect(), fakefw, "none", visible=False))
    assert got["framework.import"][0] == "fail"
    assert "reuses check ids pip.check" in got["framework.import"][1]


def test_os_packaged_framework_is_versioned_by_its_module(fakefw: Path) -> None:
    # distribution: null (Debian's python3-caffe, python3-theano): no pip metadata counts,
    # the module's __version__ decides, and a wrong one still fails.
    passed = statuses(run(expect(distribution=None), fakefw, "none", visible=False))
    assert passed["framework.version"][0] == "pass"
    assert "OS package" in passed["framework.version"][1]
    failed = statuses(run(expect(distribution=None, version="9.9"), fakefw, "none",
                          visible=False))
    assert failed["framework.version"][0] == "fail"


TOOL_PROBE = """
IMPORT_NAME = None

def installed_version():
    return "{version}"

def register(suite):
    pass
"""


@pytest.mark.parametrize("reported,status", [("7.0", "pass"), ("6.9", "fail")])
def test_a_framework_without_python_module_reports_through_its_probe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reported: str, status: str
) -> None:
    probes = tmp_path / "probes"
    probes.mkdir()
    (probes / "luatorch.py").write_text(TOOL_PROBE.replace("{version}", reported))
    monkeypatch.setattr(core, "check_pip", lambda ctx: "stubbed")
    found = statuses(run({"framework": "luatorch", "version": "7.0", "import_name": None},
                         probes, "none", visible=False))
    assert found["framework.import"][0] == "pass"
    assert found["framework.version"][0] == status
