"""`ngc-builder check-host REF`: will this image run on this machine? Asked before a
multi-gigabyte pull: the image's labels come from the registry (manifest and config blob, no
layer), the host's facts from NVML, `docker info` and /dev/shm.

Exit 0: it would run (warnings aside); 1: a finding fails; 2: bad input (a bad reference, an
image the registry does not hold, a registry that cannot be reached or refuses us).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric import ec

from ngc_builder.commands.guard import EXIT_FAILED, EXIT_INPUT, EXIT_OK
from ngc_builder.errors import EngineError, EngineSetupError, message_line
from ngc_builder.publish.cosign_keys import read_public_key
from ngc_builder.publish.signing import signature_problem
from ngc_builder.services.engine import DockerEngine
from ngc_builder.services.registry import (
    HttpRegistry,
    RegistryAuthError,
    RegistryError,
    parse_registry,
)
from ngc_builder.services.remote_image import (
    BadReference,
    ImageNotFound,
    ImageReader,
    ImageRef,
    RemoteImage,
    parse_ref,
    pull_ref,
    read_image,
)
from ngc_builder.validate.hostfacts import HostFacts, HostProbes, gather, load_pynvml
from ngc_builder.validate.hostfit import Finding, gpu_image, judge, runs

ENGINE_TIMEOUT = 10  # `docker info` of a local engine answers in well under a second
RegistryFor = Callable[[ImageRef], ImageReader]


@dataclass(frozen=True)
class CheckHostOptions:
    ref: str
    as_json: bool = False
    key: Path | None = None  # a cosign public key the image must be signed by


def check_host_command(options: CheckHostOptions, registry_for: RegistryFor | None = None,
                       host: Callable[[], HostFacts] | None = None) -> int:
    """`registry_for`: the registry of a reference (default: parsed from it, with the Docker
    config's credentials); `host`: this machine's facts (default: read through NVML, the engine
    at DOCKER_HOST and /dev/shm)."""
    public = read_public_key(options.key) if options.key else None
    try:
        image = remote_image(options.ref, registry_for or registry_at)
        unsigned = _unsigned(options.ref, registry_for or registry_at, image, public)
    except (BadReference, ImageNotFound, RegistryError) as exc:
        return _bad_input(options, str(exc))
    if unsigned is not None:  # refused before anything else is asked of it
        return _bad_input(options, f"{unsigned} (key {options.key})", EXIT_FAILED)
    findings = judge(image, (host or this_host)())
    print(json.dumps(document(image, findings), indent=2) if options.as_json
          else "\n".join(text_lines(image, findings)))
    return EXIT_OK if runs(findings) else EXIT_FAILED


def _unsigned(text: str, registry_for: RegistryFor, image: RemoteImage,
              public: ec.EllipticCurvePublicKey | None) -> str | None:
    """Why the image is not signed by `public` (None: it is, or no key was asked for)."""
    if public is None:
        return None
    ref = parse_ref(text)
    return signature_problem(registry_for(ref), ref.path, image.digest, public)


def remote_image(text: str, registry_for: RegistryFor) -> RemoteImage:
    ref = parse_ref(text)
    try:
        return read_image(registry_for(ref), ref)
    except RegistryAuthError as exc:
        raise RegistryError(f"{ref}: {exc}; `docker login {ref.host}` first") from None
    except RegistryError as exc:
        raise RegistryError(f"{ref}: {exc}") from None
    except ValueError as exc:  # a manifest or config that is not JSON
        raise ImageNotFound(f"{ref}: unreadable manifest or config ({exc})") from None


def registry_at(ref: ImageRef) -> HttpRegistry:
    # The repository path is the whole name inside the registry: no namespace split off.
    return parse_registry(ref.host)


def this_host() -> HostFacts:
    engine = DockerEngine(ENGINE_TIMEOUT)
    error = ""
    try:
        engine.ping()
    except EngineSetupError as exc:  # a TLS folder or a port that is wrong, named
        error = exc.reason
    except EngineError:
        error = "it does not answer"
    return gather(HostProbes(load_pynvml(), None if error else engine, engine.where, error))


def text_lines(image: RemoteImage, findings: list[Finding]) -> list[str]:
    kind = "GPU image" if gpu_image(image.labels) else "CPU image (no CUDA labels)"
    verdict = ("it would run here" if runs(findings)
               else "it would not run here: fix what fails before pulling")
    return [f"image {image.ref}: {kind}, {image.platform} is {pull_ref(image)}",
            *(finding.line() for finding in findings), verdict]


def document(image: RemoteImage, findings: list[Finding]) -> dict[str, object]:
    return {"ref": image.ref, "digest": image.digest, "pull": pull_ref(image),
            "platform": image.platform,
            "gpu_image": gpu_image(image.labels), "labels": image.labels,
            "runs": runs(findings), "findings": [finding.to_dict() for finding in findings]}


def refused_line(ref: str, message: str) -> str:
    """`error: REF: why`, printed as one line (a newline in REF would forge a second), no
    credential; returns the line after `error: `."""
    shown = ref if len(ref) <= 120 else ref[:120] + "..."
    line = message_line(message if message.startswith(ref) else f"{shown}: {message}")
    print(f"error: {line}", file=sys.stderr)
    return line


def _bad_input(options: CheckHostOptions, message: str, code: int = EXIT_INPUT) -> int:
    line = refused_line(options.ref, message)
    if options.as_json:
        print(json.dumps({"ok": False, "exit": code, "problems": [{"message": line}]},
                         indent=2))
    return code
