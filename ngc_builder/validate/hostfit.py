"""Will this image run on this host? The image's labels (read from the registry, no layer
pulled) held against the host's facts (`hostfacts`): driver, GPU architectures, /dev/shm, the
Docker engine and its NVIDIA runtime. One finding per question: pass, fail, warn or skip.

Only a fail means "it will not run"; warn is "it runs, but not as you would want" (a small
/dev/shm) or "cannot tell from here" (no engine to ask).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from ngc_builder.plan.dag import LABEL_PREFIX
from ngc_builder.runner.core import MIN_SHM_BYTES
from ngc_builder.services.remote_image import RemoteImage
from ngc_builder.validate.hostfacts import Gpu, HostFacts

Status = Literal["pass", "fail", "warn", "skip"]
MIN_DRIVER = f"{LABEL_PREFIX}.min-driver"
CUDA = f"{LABEL_PREFIX}.cuda"
GPU_TARGETS = f"{LABEL_PREFIX}.gpu-targets"
MiB, GiB = 1 << 20, 1 << 30
# The runner's os.shm floor: DataLoader workers and NCCL's shared-memory transport want more.
SHM_ADVISED = MIN_SHM_BYTES
DOCKER_SHM = 64 * MiB  # what a container's /dev/shm is unless told otherwise
TARGET_RE = re.compile(r"(\d+)\.(\d+)([af]?)")
TOOLKIT_HINT = ("install the NVIDIA container toolkit and run "
                "`nvidia-ctk runtime configure --runtime=docker`")


@dataclass(frozen=True)
class Finding:
    id: str
    status: Status
    message: str

    def line(self) -> str:
        return f"{self.status} {self.id}: {self.message}"

    def to_dict(self) -> dict[str, str]:
        return {"id": self.id, "status": self.status, "message": self.message}


def gpu_image(labels: dict[str, str]) -> bool:
    """A GPU image carries a CUDA stack (its version and minimum driver). gpu-targets alone does
    not make one: the builder labels CPU-only framework rows with the release's targets too."""
    return MIN_DRIVER in labels or CUDA in labels


def judge(image: RemoteImage, host: HostFacts) -> list[Finding]:
    findings = [engine_finding(host)]
    if gpu_image(image.labels):
        findings += [driver_finding(image.labels, host), targets_finding(image.labels, host),
                     runtime_finding(host)]
    else:
        findings += [Finding(check, "skip", "CPU image: not needed")
                     for check in ("driver", "gpu-targets", "nvidia-runtime")]
    return [*findings, shm_finding(host)]


def runs(findings: list[Finding]) -> bool:
    return not any(finding.status == "fail" for finding in findings)


def driver_finding(labels: dict[str, str], host: HostFacts) -> Finding:
    driver = host.driver
    if driver.version is None:
        return Finding("driver", "fail", f"no NVIDIA driver found (NVML: {driver.error})")
    minimum = labels.get(MIN_DRIVER)
    if minimum is None:
        return Finding("driver", "pass", f"driver {driver.version} (the image names no minimum)")
    try:
        too_old = _numbers(driver.version) < _numbers(minimum)
    except ValueError:
        return Finding("driver", "fail",
                       f"cannot compare driver {driver.version!r} with the minimum {minimum!r}")
    if too_old:
        return Finding("driver", "fail", f"driver {driver.version} is older than the image's "
                                         f"minimum {minimum}: upgrade the driver")
    return Finding("driver", "pass", f"driver {driver.version} >= {minimum}")


def _numbers(version: str) -> tuple[int, ...]:
    """'580.95.05' -> (580, 95, 5): NVIDIA driver versions are dotted integers."""
    return tuple(int(part) for part in version.strip().split("."))


def targets_finding(labels: dict[str, str], host: HostFacts) -> Finding:
    driver = host.driver
    if driver.version is None:
        return Finding("gpu-targets", "skip", "no GPU to compare: no NVIDIA driver found")
    if not driver.gpus:
        return Finding("gpu-targets", "fail", "NVML runs but sees no GPU")
    text = labels.get(GPU_TARGETS, "").strip()
    if not text:
        return Finding("gpu-targets", "warn", "the image names no gpu-targets: cannot tell "
                                              "which GPUs it carries code for")
    try:
        targets = [parse_target(part) for part in text.split(",")]
    except ValueError as exc:
        return Finding("gpu-targets", "fail", str(exc))
    return _coverage(driver.gpus, targets, text)


def _coverage(gpus: tuple[Gpu, ...], targets: list[tuple[int, int, str]],
              text: str) -> Finding:
    lines = [(gpu, covering(gpu.capability, targets)) for gpu in gpus]
    missing = [gpu for gpu, target in lines if target is None]
    if missing:
        names = ", ".join(f"GPU {g.index} {g.name} ({sm(g.capability)})" for g in missing)
        return Finding("gpu-targets", "fail",
                       f"no code for {names}: the image targets {text} (a target X.Y runs on "
                       "X.Z with Z >= Y; a newer major needs PTX the label does not promise)")
    named = "; ".join(f"GPU {g.index} {g.name} ({sm(g.capability)}) by {t}"
                      for g, t in lines)
    return Finding("gpu-targets", "pass", f"covered: {named}")


def parse_target(text: str) -> tuple[int, int, str]:
    """'8.0' -> (8, 0, ''); '9.0a' -> (9, 0, 'a')."""
    found = TARGET_RE.fullmatch(text.strip())
    if found is None:
        raise ValueError(f"gpu-targets: {text.strip()!r} is not a compute capability like 8.0")
    return int(found.group(1)), int(found.group(2)), found.group(3)


def covering(capability: tuple[int, int], targets: list[tuple[int, int, str]]) -> str | None:
    """The target whose code runs on a GPU of `capability`, or None.

    CUDA's binary compatibility: SASS built for X.Y runs on any X.Z with Z >= Y (same major),
    never on another major (8.0 code does not run on 9.0). Arch-specific targets (9.0a, 10.0f:
    wgmma and the like) run on exactly their own capability here, the conservative reading.
    """
    for major, minor, suffix in targets:
        same_major = major == capability[0]
        if same_major and (minor == capability[1] or (not suffix and minor < capability[1])):
            return f"{major}.{minor}{suffix}"
    return None


def sm(capability: tuple[int, int]) -> str:
    return f"sm_{capability[0]}{capability[1]}"


def engine_finding(host: HostFacts) -> Finding:
    engine = host.engine
    if engine.error is not None:
        return Finding("engine", "warn", f"no Docker engine reachable at {engine.where} "
                                         f"({engine.error}): its runtimes cannot be checked")
    return Finding("engine", "pass", f"Docker engine at {engine.where} answers")


def runtime_finding(host: HostFacts) -> Finding:
    engine = host.engine
    if engine.error is None and engine.gpu_runtime:
        return Finding("nvidia-runtime", "pass",
                       "`docker info` lists the nvidia runtime or CDI GPU devices")
    if host.toolkit is not None:
        # The toolkit's hook serves `--gpus` without a runtime entry in `docker info`.
        asked = "" if engine.error is None else " (the engine was not asked)"
        return Finding("nvidia-runtime", "pass",
                       f"NVIDIA container toolkit installed ({host.toolkit}){asked}")
    seen = "`docker info` lists no nvidia runtime, " if engine.error is None else ""
    return Finding("nvidia-runtime", "fail",
                   f"{seen}no NVIDIA container toolkit on PATH: `--gpus` cannot work; "
                   f"{TOOLKIT_HINT}")


def shm_finding(host: HostFacts) -> Finding:
    """Docker gives a container 64 MiB of /dev/shm whatever the host has; the host's size
    matters with `--ipc=host`. A small one slows or breaks data loaders but never stops the
    image from starting: warn, not fail."""
    size = host.shm_bytes
    if size is None:
        return Finding("shm", "warn", "cannot read /dev/shm; pass --shm-size=1g to docker run")
    if size < SHM_ADVISED:
        return Finding("shm", "warn",
                       f"/dev/shm is {size / MiB:.0f} MiB (under {SHM_ADVISED / GiB:.0f} GiB): "
                       "--ipc=host will not help; pass --shm-size=1g (or more) to docker run")
    return Finding("shm", "pass",
                   f"/dev/shm is {size / GiB:.1f} GiB; a container gets "
                   f"{DOCKER_SHM / MiB:.0f} MiB unless run with --ipc=host or --shm-size=1g")
