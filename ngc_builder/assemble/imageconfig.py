"""The image config the same inputs always give: the build's layers under a config written
again with every time taken from the lock's epoch.

The classic builder's layers are reproducible (render/repro.py), its config is not: `created`
and each history entry hold the time of the build, `Config.Image` names the intermediate
image the last step ran on (whose ID holds a time too), and `container`, `container_config`
and `docker_version` name the build container and the engine. So after each build the config
is made again from what the engine reports (inspect and history), those fields set or
dropped, keys sorted, and loaded with `docker load` as a tar of that config and its manifest
alone: the engine already holds every layer by its chain ID and reads none from the tar. The
image's ID is then the sha256 of the bytes written here, on any engine, on any day.

`empty_layer` is the one thing the engine does not report. The builder's own steps read it
from their intermediate images (each step's image has one layer more, or not). The steps of
the image it was built FROM (loaded like this, or pulled: no intermediates) read it from that
image's config, kept by its ID when it was written here or pulled (`KnownConfigs`, checked
against the ID); only an image known neither way (an OS pulled by reference) has its steps
told by their instruction, checked against its count of layers.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import re
import tarfile
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import docker.errors
import requests

from ngc_builder.errors import StepError
from ngc_builder.services.engine import Engine, Inspection
from ngc_builder.services.environment import xdg_home
from ngc_builder.services.streams import StreamError, consume_pull

# `<shell words> #(nop) <instruction>` is a step that ran no container (a RUN's own text comes
# after its shell, and may hold quotes or `|N` build arguments first); of those, only ADD and
# COPY write a layer.
NOP_STEP = re.compile(r"[^|'\"#]*#\(nop\)\s+(\S+)")
WRITES_FILES = ("ADD", "COPY")
CONFIG_LIMIT = 4 << 20  # bytes of a kept config: a few KB, a hundred for a long history


def epoch_time(epoch: int) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class KnownConfigs:
    """Image configs this machine wrote or pulled, each in a file named by its sha256 (the
    image's ID), read back only when the bytes still hash to that name."""

    folder: Path

    @classmethod
    def default(cls) -> KnownConfigs:
        """$XDG_CACHE_HOME/ngc-builder/image-configs (~/.cache/...): kept across runs."""
        return cls(xdg_home("XDG_CACHE_HOME", Path.home() / ".cache") / "ngc-builder"
                   / "image-configs")

    def keep(self, config: bytes) -> None:
        """Written aside and renamed: a reader never meets half a file."""
        self.folder.mkdir(parents=True, exist_ok=True)
        handle, scratch = tempfile.mkstemp(dir=self.folder, prefix=".config-")
        with os.fdopen(handle, "wb") as out:
            out.write(config)
        os.replace(scratch, self.folder / f"{hashlib.sha256(config).hexdigest()}.json")

    def empty_layers(self, image_id: str) -> list[bool] | None:
        """Its history's `empty_layer` flags, oldest first; None when not known here."""
        path = self.folder / f"{image_id.removeprefix('sha256:')}.json"
        try:
            with path.open("rb") as kept:
                data = kept.read(CONFIG_LIMIT + 1)
            if f"sha256:{hashlib.sha256(data).hexdigest()}" != image_id:
                return None  # cut short by the limit, changed, or another file
            history = json.loads(data)["history"]
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if not isinstance(history, list) or not all(isinstance(h, dict) for h in history):
            return None
        return [h.get("empty_layer") is True for h in history]


def reproducible_image(engine: Engine, name: str, image_id: str, ref: str, epoch: int,
                       known: KnownConfigs | None = None) -> str:
    """`image_id` with its config made again at `epoch`, tagged `ref`: the new image's ID."""
    known = known or KnownConfigs.default()
    expected = ""
    try:
        inspection = engine.api.inspect_image(image_id)
        history = list(reversed(engine.api.history(image_id)))  # oldest first
        config = config_bytes(inspection, history,
                              empty_layers(engine, name, inspection, history, known), epoch)
        expected = f"sha256:{hashlib.sha256(config).hexdigest()}"
        consume_pull(engine.api.load_image(io.BytesIO(config_archive(config, ref, epoch))),
                     lambda line: None)
        loaded = engine.api.inspect_image(expected)  # by ID: another run may retag `ref`
    except docker.errors.ImageNotFound as exc:
        if not expected:
            raise StepError(name, "image config", str(exc).strip()) from None
        raise StepError(name, "image config", f"the engine did not store {ref} as "
                        f"{expected}: its image store re-encodes configs") from None
    except (StreamError, docker.errors.DockerException, requests.RequestException) as exc:
        raise StepError(name, "image config", str(exc).strip()) from None
    _same_image(name, inspection, loaded)
    with contextlib.suppress(OSError):  # only a later build's history reads it
        known.keep(config)
    return expected


def config_bytes(inspection: Inspection, history: list[Inspection], empty: list[bool],
                 epoch: int) -> bytes:
    """The config as canonical JSON (sorted keys, no spaces): its sha256 is the image ID."""
    created = epoch_time(epoch)
    config: dict[str, Any] = {
        "architecture": inspection.get("Architecture"), "os": inspection.get("Os"),
        "config": {**(inspection.get("Config") or {}), "Image": ""}, "created": created,
        "history": [_history_entry(entry, created, is_empty)
                    for entry, is_empty in zip(history, empty, strict=True)],
        "rootfs": {"type": "layers", "diff_ids": _layers(inspection)},
    }
    for field, key in (("Variant", "variant"), ("Author", "author"), ("Comment", "comment")):
        if inspection.get(field):
            config[key] = inspection[field]
    return json.dumps(config, sort_keys=True, separators=(",", ":")).encode()


def _history_entry(entry: Inspection, created: str, empty: bool) -> dict[str, Any]:
    written: dict[str, Any] = {"created": created, "created_by": entry.get("CreatedBy") or ""}
    if entry.get("Comment"):
        written["comment"] = entry["Comment"]
    if empty:
        written["empty_layer"] = True
    return written


def _layers(inspection: Inspection) -> list[str]:
    """Its layers' diff IDs (the engine leaves the field out of an image that has none)."""
    return list((inspection.get("RootFS") or {}).get("Layers") or [])


def empty_layers(engine: Engine, name: str, inspection: Inspection,
                 history: list[Inspection], known: KnownConfigs) -> list[bool]:
    """Whether each history entry (oldest first) wrote no layer."""
    own, start = _own_steps(engine, inspection)
    inherited = history[: len(history) - len(own)]
    if len(inherited) != len(engine.api.history(start["Id"])):
        raise StepError(name, "image config", "its history is not its build steps' "
                        "on top of the image it was built from")
    flags = known.empty_layers(str(start["Id"]))
    if flags is None or len(flags) != len(inherited):
        flags = _by_instruction(name, inherited, len(_layers(start)))
    return flags + own


def _own_steps(engine: Engine, inspection: Inspection) -> tuple[list[bool], Inspection]:
    """The builder's steps, oldest first (each one's image against its parent's), and the
    image the build started FROM: the end of the parent chain."""
    steps: list[bool] = []
    current = inspection
    while current.get("Parent"):
        parent = engine.api.inspect_image(current["Parent"])
        steps.append(len(_layers(current)) == len(_layers(parent)))
        current = parent
    return steps[::-1], current


def _by_instruction(name: str, history: list[Inspection], layers: int) -> list[bool]:
    """A step with a size wrote a layer; a `#(nop)` step other than ADD/COPY wrote none; the
    others (a RUN or ADD that added no bytes) all wrote one, or none: the count says which."""
    sized = [int(entry.get("Size") or 0) > 0 for entry in history]
    nop = [_is_nop(entry) and not is_sized for entry, is_sized in zip(history, sized, strict=True)]
    unsure = len(history) - sum(nop) - sum(sized)
    wanted = layers - sum(sized)
    if wanted not in (0, unsure):
        raise StepError(name, "image config", f"cannot tell which of {unsure} steps without "
                        f"bytes wrote {wanted} of its {layers} layers")
    return [is_nop or (not is_sized and wanted == 0)
            for is_nop, is_sized in zip(nop, sized, strict=True)]


def _is_nop(entry: Inspection) -> bool:
    found = NOP_STEP.match(str(entry.get("CreatedBy") or ""))
    return found is not None and found.group(1) not in WRITES_FILES


def config_archive(config: bytes, ref: str, epoch: int) -> bytes:
    """A docker-archive of the config alone: its layers are named but left out (the engine
    holds them, so `docker load` reads none)."""
    diff_ids = json.loads(config)["rootfs"]["diff_ids"]
    config_name = f"{hashlib.sha256(config).hexdigest()}.json"
    layers = [f"{diff_id.removeprefix('sha256:')}/layer.tar" for diff_id in diff_ids]
    manifest = json.dumps([{"Config": config_name, "RepoTags": [ref], "Layers": layers}])
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:", format=tarfile.PAX_FORMAT) as tar:
        for member, data in ((config_name, config), ("manifest.json", manifest.encode())):
            info = tarfile.TarInfo(member)
            info.size, info.mtime, info.mode = len(data), epoch, 0o644
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def _same_image(name: str, built: Inspection, loaded: Inspection) -> None:
    """What a container of it sees, and its layers, exactly as built."""
    for field in ("RootFS", "Architecture", "Os", "Variant"):
        if built.get(field) != loaded.get(field):
            raise StepError(name, "image config", f"{field} changed when written again")
    if {**(built.get("Config") or {}), "Image": ""} != \
            {**(loaded.get("Config") or {}), "Image": ""}:
        raise StepError(name, "image config", "Config changed when written again")
