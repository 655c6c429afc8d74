"""Will the image run here? Labels against host facts, one finding per question."""

from __future__ import annotations

import pytest

from ngc_builder.services.remote_image import RemoteImage
from ngc_builder.validate.hostfacts import DriverFacts, EngineFacts, Gpu, HostFacts
from ngc_builder.validate.hostfit import covering, judge, parse_target, runs

pytestmark = pytest.mark.unit

GPU_LABELS = {"org.ngc-builder.cuda": "13.2", "org.ngc-builder.min-driver": "580",
              "org.ngc-builder.gpu-targets": "8.0,9.0"}
H100 = Gpu(0, "NVIDIA H100", (9, 0))
GiB = 1 << 30


def image(labels: dict[str, str]) -> RemoteImage:
    return RemoteImage("localhost:5000/jax:26.11-py3", "localhost:5000/jax",
                       "sha256:" + "ab" * 32, "linux/amd64", labels)


def host(driver: str | None = "580.95.05", gpus: tuple[Gpu, ...] = (H100,),
         engine_error: str | None = None, gpu_runtime: bool = True,
         toolkit: str | None = None, shm: int | None = 16 * GiB) -> HostFacts:
    facts = DriverFacts(driver, gpus if driver else (), None if driver else "NVMLError: gone")
    return HostFacts(facts, EngineFacts("unix:///run/docker.sock", engine_error, gpu_runtime),
                     toolkit, shm)


def by_id(labels: dict[str, str], facts: HostFacts) -> dict[str, tuple[str, str]]:
    return {f.id: (f.status, f.message) for f in judge(image(labels), facts)}


def test_a_fit_gpu_host_passes_everything() -> None:
    findings = judge(image(GPU_LABELS), host())
    assert [(f.id, f.status) for f in findings] == [
        ("engine", "pass"), ("driver", "pass"), ("gpu-targets", "pass"),
        ("nvidia-runtime", "pass"), ("shm", "pass")]
    assert runs(findings)
    assert findings[2].message == "covered: GPU 0 NVIDIA H100 (sm_90) by 9.0"


def test_no_nvml_under_a_gpu_image_fails_with_nvmls_reason() -> None:
    found = by_id(GPU_LABELS, host(driver=None))
    assert found["driver"] == ("fail", "no NVIDIA driver found (NVML: NVMLError: gone)")
    assert found["gpu-targets"][0] == "skip"
    assert not runs(judge(image(GPU_LABELS), host(driver=None)))


@pytest.mark.parametrize(("driver", "status"), [
    ("575.57.08", "fail"), ("580", "pass"), ("580.95.05", "pass"), ("1000.1", "pass"),
    ("weird", "fail"),
])
def test_the_driver_against_the_images_minimum(driver: str, status: str) -> None:
    assert by_id(GPU_LABELS, host(driver=driver))["driver"][0] == status


def test_an_old_driver_names_both_versions() -> None:
    message = by_id(GPU_LABELS, host(driver="535.104.05"))["driver"][1]
    assert "535.104.05" in message and "580" in message and "upgrade" in message


@pytest.mark.parametrize(("capability", "targets", "expected"), [
    ((8, 0), "8.0,9.0", "8.0"),
    ((8, 6), "8.0,9.0", "8.0"),  # same major, higher minor: SASS for 8.0 runs
    ((8, 9), "8.6", "8.6"),
    ((8, 0), "8.6", None),  # a lower minor than the target: no
    ((7, 5), "8.0,9.0", None),
    ((10, 0), "8.0,9.0", None),  # a newer major: no SASS runs there
    ((12, 0), "8.0,9.0,10.0", None),
    ((9, 0), "9.0a", "9.0a"),  # arch-specific: its own capability only
    ((9, 1), "9.0a", None),
])
def test_the_sass_compatibility_rule(capability: tuple[int, int], targets: str,
                                     expected: str | None) -> None:
    assert covering(capability, [parse_target(t) for t in targets.split(",")]) == expected


def test_an_uncovered_gpu_fails_naming_it() -> None:
    blackwell = Gpu(1, "NVIDIA B200", (10, 0))
    status, message = by_id(GPU_LABELS, host(gpus=(H100, blackwell)))["gpu-targets"]
    assert status == "fail" and "GPU 1 NVIDIA B200 (sm_100)" in message
    assert "GPU 0" not in message


def test_targets_missing_or_malformed() -> None:
    labels = {k: v for k, v in GPU_LABELS.items() if not k.endswith("gpu-targets")}
    assert by_id(labels, host())["gpu-targets"][0] == "warn"
    bad = {**GPU_LABELS, "org.ngc-builder.gpu-targets": "8.0,sm_90"}
    assert by_id(bad, host())["gpu-targets"] == (
        "fail", "gpu-targets: 'sm_90' is not a compute capability like 8.0")
    assert by_id(GPU_LABELS, host(gpus=()))["gpu-targets"][0] == "fail"


def test_the_nvidia_runtime_from_docker_info_or_the_toolkit() -> None:
    assert by_id(GPU_LABELS, host(gpu_runtime=False))["nvidia-runtime"][0] == "fail"
    hooked = by_id(GPU_LABELS, host(gpu_runtime=False, toolkit="/usr/bin/nvidia-ctk"))
    assert hooked["nvidia-runtime"][0] == "pass"
    unasked = by_id(GPU_LABELS, host(engine_error="it does not answer", toolkit="/x/nvidia-ctk"))
    assert unasked["nvidia-runtime"] == ("pass", "NVIDIA container toolkit installed "
                                                 "(/x/nvidia-ctk) (the engine was not asked)")


def test_no_engine_is_its_own_warning() -> None:
    found = by_id(GPU_LABELS, host(engine_error="it does not answer", gpu_runtime=False))
    assert found["engine"][0] == "warn" and "no Docker engine reachable" in found["engine"][1]
    assert found["nvidia-runtime"][0] == "fail"


def test_a_cpu_image_needs_no_gpu_even_with_the_releases_targets() -> None:
    labels = {"org.ngc-builder.gpu-targets": "8.0,9.0", "org.ngc-builder.python": "3.11"}
    findings = judge(image(labels), host(driver=None, gpu_runtime=False))
    gpu = [f for f in findings if f.id in ("driver", "gpu-targets", "nvidia-runtime")]
    assert [(f.status, f.message) for f in gpu] == [("skip", "CPU image: not needed")] * 3
    assert runs(findings)


@pytest.mark.parametrize(("size", "status", "says"), [
    (64 << 20, "warn", "--shm-size=1g"),
    (None, "warn", "--shm-size=1g"),
    (8 * GiB, "pass", "--ipc=host"),
])
def test_shm_warns_under_a_gib_and_says_what_to_pass(size: int | None, status: str,
                                                     says: str) -> None:
    found = by_id({}, host(shm=size))["shm"]
    assert found[0] == status and says in found[1]
    assert runs(judge(image({}), host(shm=size)))  # a small /dev/shm never stops an image
