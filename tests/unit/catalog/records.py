"""A small archive of two releases (25.10 and 26.11) and the 26.11 release record with one
runner report, written the way `report` and `release` write them: what the catalog tests read.

26.11 has `base` and `pytorch` published (pytorch validated on an H100, its T3 check skipped
as the runner recorded it), `tensorrt` an expected failure whose build failed, and a hostile
`<script>` in pytorch's title label, its evidence, the failure's error and its log."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ngc_builder.records.archive import ArchivedImage, ArchivedRelease
from ngc_builder.records.record import (
    BuildRecord,
    ImageRecord,
    PushRecord,
    ReleaseRecord,
    ValidationRecord,
    save_record,
)
from ngc_builder.runner.report import CheckResult, RunReport

PYTORCH = "sha256:" + "1f" * 32
BASE = "sha256:" + "0b" * 32
OLD_PYTORCH = "sha256:" + "aa" * 32
KEY = "c" * 64
HOSTILE = "<script>alert('x')</script>"
GPU = "NVIDIA H100 80GB HBM3"
P = "org.ngc-builder."

MANIFEST = """\
release: "26.11"
registry: registry.example:5000/ngc
base: debian-trixie
gpu_targets: ["8.0", "9.0"]
cuda_stacks:
  cu13:
    cuda: "13.2"
images:
  - framework: pytorch
    version: "2.15.0"
    stack: cu13
  - framework: tensorrt
    version: "11.4.0.106"
    stack: cu13
    platforms: [linux/amd64, linux/arm64, "<script>alert('x')</script>", ../../x]
    expect_failure: "the wheel downloads libnvinfer from an index these machines cannot reach"
"""


def labels(name: str, title: str, framework: bool = True) -> dict[str, str]:
    found = {"org.opencontainers.image.title": title,
             "org.opencontainers.image.version": "26.11-py3", P + "image": name,
             P + "os": "debian-trixie", P + "python": "3.13"}
    if framework:
        found |= {P + "framework": name, P + "framework.version": "2.15.0", P + "cuda": "13.2",
                  P + "cudnn": "9.26.0.51", P + "nccl": "2.30.7", P + "cublas": "13.4.1.3",
                  P + "min-driver": "580", P + "gpu-targets": "8.0,9.0", P + "stack": "cu13",
                  P + "addons": "nvidia-cudnn-frontend==1.28.0,nvtx==0.2.17"}
    return found


@dataclass(frozen=True)
class Fixture:
    archive: Path
    record: Path


def write_packages(path: Path, pip: dict[str, str], dpkg: dict[str, str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"pip": pip, "dpkg": dpkg}, indent=1), encoding="utf-8")


def write_archive(root: Path, previous: bool = True) -> Path:
    archive = root / "archive"
    release = ArchivedRelease(release="26.11", registry="registry.example:5000/ngc", images={
        "base": ArchivedImage(key="b" * 64, digest=BASE, labels=labels("base", "base", False)),
        "pytorch": ArchivedImage(key=KEY, digest=PYTORCH,
                                 labels=labels("pytorch", f"PyTorch {HOSTILE}"))})
    (archive / "26.11").mkdir(parents=True)
    (archive / "26.11" / "release.json").write_text(release.model_dump_json(indent=2))
    (archive / "26.11" / "manifest.yaml").write_text(MANIFEST)
    write_packages(archive / "26.11" / "packages" / "pytorch.json",
                   {"torch": "2.15.0", "numpy": "2.5.5", "onnx": "1.23.2"},
                   {"bash": "5.2.37", "libc6": "2.41-12"})
    write_packages(archive / "26.11" / "packages" / "base.json", {"pip": "25.1.1"},
                   {"bash": "5.2.37"})
    if previous:
        old = ArchivedRelease(release="25.10", registry="registry.example:5000/ngc", images={
            "pytorch": ArchivedImage(digest=OLD_PYTORCH, labels={})})
        (archive / "25.10").mkdir()
        (archive / "25.10" / "release.json").write_text(old.model_dump_json(indent=2))
        (archive / "25.10" / "manifest.yaml").write_text(MANIFEST.replace("26.11", "25.10"))
        write_packages(archive / "25.10" / "packages" / "pytorch.json",
                       {"torch": "2.14.1", "numpy": "2.5.5", "typing_extensions": "4.15.0"},
                       {"bash": "5.2.37", "libc6": "2.41-12"})
    return archive


def report() -> RunReport:
    checks = [
        CheckResult("labels", "T0", "pass", "20 labels as planned",
                    evidence={"labels": {"title": HOSTILE}}),
        CheckResult("gpu.driver", "T1", "pass", "driver 580.95.05 >= 580",
                    evidence={"driver": "580.95.05"}),
        CheckResult("torch.gpu.amp_step", "T2", "pass", "loss 1.28 -> 0.06 in 30 steps"),
        CheckResult("torch.bench.gemm_bf16", "T3", "skip", "no GPU"),
    ]
    return RunReport(image="pytorch", python="3.13.5", platform="Linux", gpu_mode="required",
                     gpu_expected=True, checks=checks,
                     environment={"gpus_start": {"gpus": [{"index": 0, "name": GPU}]}})


def write_record(root: Path) -> Path:
    reports = root / "build" / "26.11" / "reports"
    logs = root / "build" / "26.11" / "logs"
    reports.mkdir(parents=True)
    logs.mkdir(parents=True)
    (reports / "pytorch.validation.json").write_text(json.dumps(report().to_dict()))
    (logs / "tensorrt.log").write_text(
        "Step 3/5 : RUN pip install tensorrt==11.4.0.106\n"
        "ERROR: No matching distribution found for tensorrt==11.4.0.106\n"
        f"downloading https://pypi.nvidia.example/simple {HOSTILE}\n")
    pytorch = ImageRecord(
        name="pytorch", kind="framework", parent="base",
        labels=labels("pytorch", f"PyTorch {HOSTILE}"),
        build=BuildRecord(status="ok", size_bytes=6_197_624_639),
        validation=ValidationRecord(
            status="ok", verdict="pass", gpu_mode="required",
            summary={"pass": 3, "fail": 0, "skip": 1},
            tiers={"T0": "pass", "T1": "pass", "T2": "pass", "T3": "skip: no GPU"},
            report="build/26.11/reports/pytorch.validation.json"),
        push=PushRecord(status="ok", digest=PYTORCH, promoted=["26.11-py3", f"key-{KEY}"]))
    tensorrt = ImageRecord(
        name="tensorrt", kind="framework", parent="base",
        expect_failure="the wheel downloads libnvinfer",
        labels=labels("tensorrt", "TensorRT 26.11"),
        build=BuildRecord(status="failed", error=f"pip: ERROR: no tensorrt {HOSTILE}",
                          log="build/26.11/logs/tensorrt.log"),
        validation=ValidationRecord(status="blocked", error="build failed"),
        push=PushRecord(status="blocked", error="build failed"))
    record = ReleaseRecord(release="26.11", registry="registry.example:5000/ngc",
                           manifest="releases/26.11.yaml",
                           images={"pytorch": pytorch, "tensorrt": tensorrt})
    path = root / "build" / "26.11" / "release.json"
    save_record(record, path)
    return path


def write_all(root: Path, previous: bool = True) -> Fixture:
    return Fixture(write_archive(root, previous), write_record(root))
