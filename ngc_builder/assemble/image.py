"""Build: one image through the engine's streamed build API, with the labels that say what
it was built from and where, its config then written again at the lock's epoch
(assemble/imageconfig.py): the same inputs give the same image ID on any engine."""

from __future__ import annotations

import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import docker.errors
import requests

from ngc_builder.assemble.imageconfig import reproducible_image
from ngc_builder.cache.network import BuildNetwork
from ngc_builder.errors import StepError
from ngc_builder.manifest.platforms import HOST_PLATFORM
from ngc_builder.plan.dag import ImageSpec
from ngc_builder.redact import strip_userinfo
from ngc_builder.render.contexts import RenderedImage
from ngc_builder.services.engine import KEY_LABEL, Engine
from ngc_builder.services.streams import LineSink, StreamError, consume_build


@dataclass(frozen=True)
class BuildOutcome:
    image_id: str
    seconds: float
    size_bytes: int
    built_id: str  # the builder's own image: image_id before its config was written again


def build_labels(
    spec: ImageSpec, key: str, created: str, revision: str, source: str
) -> dict[str, str]:
    return {
        **spec.labels,
        KEY_LABEL: key,
        "org.opencontainers.image.created": created,
        "org.opencontainers.image.revision": revision,
        "org.opencontainers.image.source": source,
    }


def project_revision(root: Path) -> str:
    head = _git(root, "rev-parse", "HEAD")
    if head is None:
        return "unknown"
    dirty = _git(root, "status", "--porcelain", "--untracked-files=no")
    return f"{head}-dirty" if dirty else head


def project_source(root: Path, configured: str | None) -> str:
    """Where the project lives, for the `source` label: never with the token a CI runner
    clones with (`https://gitlab-ci-token:TOKEN@host/...`), and never a remote that is only a
    folder of the build host (a clone of a local checkout): that names the build machine in
    every published image and tells a reader nothing."""
    found = configured or _git(root, "remote", "get-url", "origin") or "unknown"
    return strip_userinfo(found) if REMOTE_URL.match(found) else "unknown"


# A network URL (https://, ssh://, git://) or scp-like `git@host:path`, not a path or file://.
REMOTE_URL = re.compile(r"(?!file:)[a-z][a-z0-9+.-]*://|[\w.-]+@[\w.-]+:", re.IGNORECASE)


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True,
                              text=True, check=False, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def build_image(
    engine: Engine, rendered: RenderedImage, context_dir: Path, labels: dict[str, str],
    sink: LineSink, nocache: bool = False, network: BuildNetwork | None = None,
) -> BuildOutcome:
    """Build `context_dir` as the candidate's local ref on `network` (where the package cache
    is); StepError names image and error."""
    spec = rendered.spec
    started = time.monotonic()
    options = network.build_options() if network is not None else {}
    if rendered.platform != HOST_PLATFORM:  # its FROM is that platform's; RUN is emulated
        options["platform"] = rendered.platform
    try:
        stream = engine.api.build(path=str(context_dir), tag=rendered.local_ref, labels=labels,
                                  rm=True, forcerm=True, pull=False, decode=True,
                                  nocache=nocache, **options)
        built = consume_build(stream, sink)
        image_id = reproducible_image(engine, spec.name, built, rendered.local_ref,
                                      rendered.epoch)
        size = int(engine.api.inspect_image(image_id)["Size"])
    except StreamError as exc:
        raise StepError(spec.name, "build", str(exc)) from None
    except docker.errors.APIError as exc:
        raise StepError(spec.name, "build", str(exc.explanation or exc)) from None
    except (docker.errors.DockerException, requests.RequestException) as exc:
        raise StepError(spec.name, "build", f"{exc.__class__.__name__}: {exc}") from None
    return BuildOutcome(image_id, time.monotonic() - started, size, built)
