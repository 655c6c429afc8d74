"""Load the expectations each image layer wrote at build time (``/opt/ngc/expect/*.json``)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from .versions import release_components

# The GPUs every release must run on unless it says otherwise: A100 (sm_80) and H100 (sm_90).
DEFAULT_GPU_TARGETS = ("8.0", "9.0")
# Keys the runner reads, with the JSON type it needs; other keys are kept and reported as-is.
_STRING_KEYS = (
    "image",
    "python",
    "stack",
    "framework",
    "version",
    "probe",
)
# null means "none": an OS-packaged framework has no pip distribution, Lua Torch no module.
_NULLABLE_STRING_KEYS = ("distribution", "import_name")
_MAPPING_KEYS = ("libraries", "wheels")
_PROBE_NAME = re.compile(r"[A-Za-z0-9_-]+")
_CAPABILITY = re.compile(r"[0-9]+\.[0-9]")


class ExpectError(Exception):
    """The expectation files are missing or invalid: bad runner input (exit code 2)."""


def load_expect(directory: Path) -> dict[str, Any]:
    """Merge every ``*.json`` in ``directory`` in sorted filename order, then validate."""
    if not directory.is_dir():
        raise ExpectError(f"expect dir not found: {directory}")
    files = sorted(directory.glob("*.json"), key=lambda p: p.name)
    if not files:
        # Running with no expectations would "pass" while checking nothing, so refuse.
        raise ExpectError(f"no expectation files (*.json) in {directory}")
    merged: dict[str, Any] = {}
    for path in files:
        merged = merge(merged, _read(path))
    validate(merged)
    return merged


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ExpectError(f"{path}: cannot read expectations: {exc}") from None
    if not isinstance(data, dict):
        raise ExpectError(f"{path}: top level must be a JSON object, not {type(data).__name__}")
    return data


def merge(base: dict[str, Any], layer: dict[str, Any]) -> dict[str, Any]:
    """Later layers override keys; dict values merge one level deep (wheels, libraries)."""
    out = dict(base)
    for key, value in layer.items():
        previous = out.get(key)
        if isinstance(previous, dict) and isinstance(value, dict):
            out[key] = {**previous, **value}
        else:
            out[key] = value
    return out


def validate(expect: dict[str, Any]) -> None:
    for key in _STRING_KEYS:
        if key in expect and not isinstance(expect[key], str):
            raise ExpectError(f"expectation {key!r} must be a string, got {expect[key]!r}")
    for key in _NULLABLE_STRING_KEYS:
        if expect.get(key) is not None and not isinstance(expect[key], str):
            raise ExpectError(f"expectation {key!r} must be a string or null")
    for key in _MAPPING_KEYS:
        _validate_mapping(key, expect.get(key, {}))
    for name, version in expect.get("libraries", {}).items():
        _require_numeric(f"libraries.{name}", version)
    if "python" in expect:
        _require_numeric("python", expect["python"])
    _validate_fields(expect)


def _validate_fields(expect: dict[str, Any]) -> None:
    targets = expect.get("gpu_targets", [])
    if not isinstance(targets, list) or not all(_CAPABILITY.fullmatch(str(t)) for t in targets):
        raise ExpectError(f"expectation 'gpu_targets' must list compute capabilities like "
                          f"\"9.0\", got {targets!r}")
    _validate_extras(expect.get("extras", []))
    if not isinstance(expect.get("host_mode", False), bool):
        raise ExpectError(f"expectation 'host_mode' must be true or false, "
                          f"got {expect['host_mode']!r}")
    probe = expect.get("probe")
    # The probe name becomes a file name: refuse anything that could leave the probes dir.
    if probe is not None and not _PROBE_NAME.fullmatch(probe):
        raise ExpectError(f"expectation 'probe' must be a plain name, got {probe!r}")


def _validate_extras(extras: object) -> None:
    # The extras of its own distribution the image installed (jax[cuda13] -> ["cuda13"]).
    if not isinstance(extras, list) or not all(isinstance(e, str) and e for e in extras):
        raise ExpectError(f"expectation 'extras' must list extra names, got {extras!r}")


def _validate_mapping(key: str, value: object) -> None:
    if not isinstance(value, dict):
        raise ExpectError(f"expectation {key!r} must be an object, got {value!r}")
    for name, version in value.items():
        if not isinstance(version, str) or not version.strip():
            raise ExpectError(f"expectation {key}.{name} must be a version string, got {version!r}")


def _require_numeric(key: str, version: str) -> None:
    # Library sonames and version queries work on the numeric components only.
    try:
        release_components(version)
    except ValueError:
        raise ExpectError(f"expectation {key} is not a numeric version: {version!r}") from None
