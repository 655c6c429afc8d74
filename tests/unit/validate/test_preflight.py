"""T1 host preflight against a fake NVML: every finding is the host's, never passed blindly."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from ngc_builder.commands.preflight import PreflightOptions, preflight_command
from ngc_builder.commands.release import ReleaseOptions, release_command
from ngc_builder.manifest.load import load_release
from ngc_builder.pipeline.flow import Host
from ngc_builder.pipeline.images import host_defects
from ngc_builder.runner.report import CheckResult
from ngc_builder.services.engine import Engine
from ngc_builder.validate.preflight import host_preflight, load_nvml
from tests.conftest import WriteRelease
from tests.unit.conftest import GOOD_RELEASE

pytestmark = pytest.mark.unit


class NVMLError(Exception):
    pass


class CodedNVMLError(Exception):
    """Like pynvml.NVMLError: the NVML status code in `value`."""

    def __init__(self, value: int, text: str) -> None:
        super().__init__(text)
        self.value = value


GPU_IS_LOST, NO_PERMISSION, NOT_SUPPORTED = 15, 4, 3


@dataclass
class FakeNvml:
    """Answers like pynvml for one healthy H100 unless a test changes a field."""

    driver: str = "580.95.05"
    gpus: int = 1
    ecc_errors: int = 0
    remapped: tuple[int, int, int, int] = (0, 0, 0, 0)
    reasons: int = 0x1  # GPU idle: not a slowdown
    processes: list[Any] = field(default_factory=list)
    init_error: Exception | None = None
    remap_supported: bool = True
    shut_down: bool = False
    lost: set[int] = field(default_factory=set)
    driver_error: Exception | None = None
    clocks_error: Exception | None = None

    def nvmlInit(self) -> None:
        if self.init_error:
            raise self.init_error

    def nvmlShutdown(self) -> None:
        self.shut_down = True

    def nvmlSystemGetDriverVersion(self) -> bytes:
        if self.driver_error:
            raise self.driver_error
        return self.driver.encode()

    def nvmlDeviceGetCount(self) -> int:
        return self.gpus

    def nvmlDeviceGetHandleByIndex(self, index: int) -> int:
        if index in self.lost:
            raise CodedNVMLError(GPU_IS_LOST, "GPU is lost")
        return index

    def nvmlDeviceGetName(self, handle: int) -> str:
        return "NVIDIA H100 80GB HBM3"

    def nvmlDeviceGetCudaComputeCapability(self, handle: int) -> tuple[int, int]:
        return (9, 0)

    def nvmlDeviceGetMemoryInfo(self, handle: int) -> Any:
        return SimpleNamespace(total=80 * (1 << 30))

    def nvmlDeviceGetEccMode(self, handle: int) -> tuple[int, int]:
        return (1, 1)

    def nvmlDeviceGetTotalEccErrors(self, handle: int, kind: int, counter: int) -> int:
        return self.ecc_errors

    def nvmlDeviceGetRemappedRows(self, handle: int) -> tuple[int, int, int, int]:
        if not self.remap_supported:
            raise NVMLError("Not Supported")
        return self.remapped

    def nvmlDeviceGetCurrentClocksEventReasons(self, handle: int) -> int:
        if self.clocks_error:
            raise self.clocks_error
        return self.reasons

    def nvmlDeviceGetPersistenceMode(self, handle: int) -> int:
        return 1

    def nvmlDeviceGetMigMode(self, handle: int) -> tuple[int, int]:
        return (0, 0)

    def nvmlDeviceGetComputeRunningProcesses(self, handle: int) -> list[Any]:
        return self.processes


def results(nvml: FakeNvml, minimum: str | None = "580") -> dict[str, Any]:
    return {check.id: check for check in host_preflight(minimum, nvml)}


def test_a_healthy_host_passes_every_check() -> None:
    nvml = FakeNvml()
    found = results(nvml)
    assert {c.status for c in found.values()} == {"pass"}
    assert set(found) == {"t1.nvml", "t1.driver", "t1.gpus", "t1.ecc", "t1.remapped_rows",
                          "t1.clocks", "t1.modes", "t1.processes"}
    assert "NVIDIA H100 80GB HBM3 (sm_90, 80.0 GiB)" in found["t1.gpus"].message
    assert nvml.shut_down


def test_an_old_driver_is_a_host_defect_with_both_versions() -> None:
    check = results(FakeNvml(driver="575.57.08"))["t1.driver"]
    assert (check.status, check.fault) == ("fail", "host")
    assert check.message == "driver 575.57.08 is older than the image's minimum 580"


@pytest.mark.parametrize("change,check_id,words", [
    ({"ecc_errors": 3}, "t1.ecc", "uncorrected ECC errors on GPU [0]"),
    ({"remapped": (0, 0, 1, 0)}, "t1.remapped_rows", "pending or failed on GPU [0]"),
    ({"reasons": 0x40}, "t1.clocks", "hardware thermal slowdown"),
    ({"reasons": 0x04 | 0x1}, "t1.clocks", "software power cap"),
    ({"processes": [SimpleNamespace(pid=os.getpid() + 1, usedGpuMemory=10 << 30)]},
     "t1.processes", "GPUs are busy: pid"),
])
def test_each_host_defect_fails_its_check(change: dict[str, Any], check_id: str,
                                          words: str) -> None:
    check = results(FakeNvml(**change))[check_id]
    assert (check.status, check.fault) == ("fail", "host")
    assert words in check.message


def test_our_own_process_is_not_foreign() -> None:
    mine = SimpleNamespace(pid=os.getpid(), usedGpuMemory=1 << 30)
    assert results(FakeNvml(processes=[mine]))["t1.processes"].status == "pass"


def test_no_nvml_or_no_driver_skips_with_the_reason_never_passes() -> None:
    found = results(FakeNvml(init_error=NVMLError("Driver Not Loaded")))
    assert list(found) == ["t1.nvml"]
    assert found["t1.nvml"].status == "skip"
    assert found["t1.nvml"].message == "no GPU: NVML did not start (Driver Not Loaded)"


@pytest.mark.parametrize("nvml", [None, FakeNvml(init_error=NVMLError("Driver Not Loaded"))])
def test_under_ngc_gpu_required_no_nvml_is_a_host_failure(nvml: FakeNvml | None) -> None:
    # None stands for "nvidia-ml-py missing" only where the test machine lacks it; the fake
    # that cannot start covers a machine that has it.
    if nvml is None and load_nvml() is not None:
        pytest.skip("nvidia-ml-py is installed here: the missing-module case cannot happen")
    [check] = host_preflight("580", nvml, required=True)
    assert (check.id, check.status, check.fault) == ("t1.nvml", "fail", "host")
    assert check.message.startswith("no GPU, but NGC_GPU=required: ")


@pytest.mark.parametrize(("environ", "code", "line"), [
    ({}, 0, "skip T1 t1.nvml: no GPU: NVML did not start (Driver Not Loaded)"),
    ({"NGC_GPU": "none"}, 0, "skip T1 t1.nvml: no GPU: NVML did not start (Driver Not Loaded)"),
    ({"NGC_GPU": "required"}, 1,
     "fail T1 t1.nvml: no GPU, but NGC_GPU=required: NVML did not start (Driver Not Loaded)"),
])
def test_the_preflight_command_fails_only_when_a_gpu_is_required(
        environ: dict[str, str], code: int, line: str,
        capsys: pytest.CaptureFixture[str]) -> None:
    nvml = FakeNvml(init_error=NVMLError("Driver Not Loaded"))
    assert preflight_command(PreflightOptions(), environ, nvml) == code
    assert capsys.readouterr().out.splitlines() == [line]


def test_an_unknown_ngc_gpu_is_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert preflight_command(PreflightOptions(), {"NGC_GPU": "maybe"}, FakeNvml()) == 2
    assert "NGC_GPU" in capsys.readouterr().err


def test_an_unsupported_query_is_skipped_with_its_error() -> None:
    check = results(FakeNvml(remap_supported=False))["t1.remapped_rows"]
    assert check.status == "skip" and "Not Supported" in check.message


def test_a_lost_gpu_is_a_host_defect_and_the_others_are_still_checked() -> None:
    found = results(FakeNvml(gpus=2, lost={1}))
    reachable = found["t1.reachable"]
    assert reachable.status == "fail" and reachable.fault == "host"
    assert "GPU 1 unreachable" in reachable.message and "GPU is lost" in reachable.message
    assert found["t1.gpus"].status == "pass" and "1 GPU(s)" in found["t1.gpus"].message


def test_an_unreadable_driver_version_is_a_host_defect_not_a_crash() -> None:
    denied = CodedNVMLError(NO_PERMISSION, "Insufficient Permissions")
    found = results(FakeNvml(driver_error=denied))
    assert found["t1.driver"].status == "fail" and found["t1.driver"].fault == "host"
    assert "Insufficient Permissions" in found["t1.driver"].message


@pytest.mark.parametrize(("code", "status"), [(NOT_SUPPORTED, "skip"), (GPU_IS_LOST, "fail")])
def test_a_query_error_is_a_skip_only_when_the_gpu_lacks_the_query(code: int,
                                                                    status: str) -> None:
    check = results(FakeNvml(clocks_error=CodedNVMLError(code, "NVML said no")))["t1.clocks"]
    assert check.status == status and "NVML said no" in check.message


def test_without_an_image_minimum_the_driver_is_only_reported() -> None:
    check = results(FakeNvml(driver="535.1"), minimum=None)["t1.driver"]
    assert check.status == "pass" and check.evidence["driver"] == "535.1"


def test_the_release_minimum_is_its_strictest_stack(project: Any, write_release: Any) -> None:
    from ngc_builder.manifest.drivers import strictest_driver
    from ngc_builder.manifest.load import load_release
    from tests.unit.conftest import GOOD_RELEASE

    text = GOOD_RELEASE.replace("cuda_stacks:\n", 'cuda_stacks:\n  old:\n    cuda: "12.9"\n'
                                "    wheels:\n      nvidia-cuda-runtime-cu12: \"12.9.79\"\n")
    assert strictest_driver(load_release(write_release(text))) == "580"


def test_a_release_with_gpus_stops_on_a_host_defect(
    write_release: WriteRelease, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    old_driver = CheckResult("t1.driver", "T1", "fail", "driver 535.104 < 580", fault="host")
    def no_engine() -> Engine:
        pytest.fail("must not reach the engine")

    host = Host(connect=no_engine, gpu_mode=lambda: "required",
                preflight=lambda minimum: [old_driver])
    options = ReleaseOptions(manifest=write_release(GOOD_RELEASE), build_dir=tmp_path,
                             stack_check=False)
    assert release_command(options, host) == 1
    assert "host defect: t1.driver: driver 535.104 < 580" in capsys.readouterr().err
    saved = json.loads((tmp_path / "26.11" / "preflight.json").read_text())
    assert saved[0]["fault"] == "host"


def test_without_gpus_the_release_runs_no_preflight(write_release: WriteRelease,
                                                    tmp_path: Path) -> None:
    def no_preflight(minimum: str | None) -> list[CheckResult]:
        pytest.fail("no preflight")

    loaded = load_release(write_release(GOOD_RELEASE))
    assert host_defects(loaded, tmp_path, "none", no_preflight) == []
