"""A re-run of a release that has nothing to do, answered without loading the manifest,
rendering, planning or the engine: from a memo of what the last complete run left in the
registry.

A run that published every selected image (pushed or found, signed, promoted; nothing failed
but the expected failures) writes the memo: a fingerprint of what decides what a run does,
taken before the run read any of it, and every registry reference that run read or wrote
(manifests by tag or digest, blobs), each with what the run itself last saw the registry hold
for it (never a later look). A later run with the same fingerprint
asks the registry about each reference once more (a HEAD each, in parallel); when every answer
is the memo's, it stops there: the whole run would read the same registry, find every image
published, signed and tagged, and change nothing.

The fingerprint covers the command's options, the manifest and its lock, the project's
`templates/`, `frameworks/`, `base-images/` and `baselines/` (the template loader reads nothing
else of the project), the site file, the builder's own code, every NGC_ setting, the signing
key and the host's GPU mode. Anything else falls through to the whole run: no memo, another
fingerprint, a reference moved or gone, a registry that does not answer, a record changed
since, a memo this host did not sign (an HMAC with a key of the state folder: a memo put in
the build folder from elsewhere is not taken at its word). Every whole run removes the memo
first, so it never outlives the record it describes. It is not used with --json (whoever
reads JSON gets this run's record), nor on a host with GPUs (its T1 preflight runs each time).
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
import os
import secrets
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import ngc_builder
from ngc_builder.files import file_sha256, write_atomic
from ngc_builder.manifest.paths import PROJECT_FOLDERS, SITE_FILE, default_root, lock_path
from ngc_builder.pipeline.options import ReleaseOptions
from ngc_builder.publish.key_files import configured_key_text
from ngc_builder.records.lock import release_lock
from ngc_builder.services.environment import gpu_mode, setting, state_dir
from ngc_builder.services.registry import HttpRegistry, RegistryError, parse_registry

if TYPE_CHECKING:
    from ngc_builder.services.registry import Registry

MEMO_VERSION = 1
MAC_KEY_FILE = "noop-memo.key"
WORKERS = 8  # registry requests at a time
KEY_BYTES = 32
Reference = tuple[str, str, str]  # (manifest | blob, repository name, tag or digest)


@dataclass(frozen=True)
class NoopAnswer:
    """A re-run answered by the memo: nothing built, validated, pushed or moved."""

    release_dir: Path
    checked: int  # registry references asked about
    seconds: float


@dataclass(frozen=True)
class Memo:
    """What the last complete run left: its record (by hash) and each reference's answer."""

    registry: str
    record: Path
    record_sha256: str
    references: list[Reference]
    answers: list[str | None]


def memo_path(options: ReleaseOptions) -> Path:
    # Named after the manifest's path: the release's own folder is not known before the
    # manifest is parsed, which this check avoids.
    name = hashlib.sha256(str(options.manifest.resolve()).encode()).hexdigest()[:16]
    return options.build_dir / ".noop" / f"{name}.json"


def applies(options: ReleaseOptions) -> bool:
    """Runs that publish, on a host without GPUs, keep a memo (--json ones too)."""
    policy = options.policy
    return policy.push and policy.promote and policy.reuse_published and gpu_mode() == "none"


def forget(options: ReleaseOptions) -> None:
    """A whole run starts: what the memo says may stop being true."""
    memo_path(options).unlink(missing_ok=True)


def answered(options: ReleaseOptions, inputs: str) -> NoopAnswer | None:
    """The answer when the memo is of these `inputs` (their fingerprint) and the registry
    still holds everything as it says, else None."""
    if options.as_json or not applies(options):
        return None
    started = time.monotonic()
    memo = _read_memo(options, inputs)
    if memo is None:
        return None
    with release_lock(memo.record.parent,
                      lambda text: print(f"note: {text}", file=sys.stderr)):
        if _file_sha256(memo.record) != memo.record_sha256:
            return None
        try:
            found = _answers(parse_registry(memo.registry), memo.references)
        except (RegistryError, ValueError):
            return None  # the whole run says what is wrong with the registry
    if found != memo.answers:
        return None
    return NoopAnswer(memo.record.parent, len(found), time.monotonic() - started)


def remember(options: ReleaseOptions, inputs: str, registry: Registry, record: Path) -> None:
    """After a run that published every selected image: the memo of what it left. `inputs`:
    the fingerprint taken before the run read anything (a file edited while it ran must not
    pass for one it built)."""
    if not applies(options) or not isinstance(registry, HttpRegistry):
        return
    # What the run itself last saw or wrote, never a later look: a tag another client moved
    # while the run went on must not become what the next run accepts.
    observed = dict(registry.observed)
    body = {"version": MEMO_VERSION, "fingerprint": inputs,
            "registry": registry.address, "record": str(record.resolve()),
            "record_sha256": _file_sha256(record),
            "references": [[*ref, observed[ref]] for ref in sorted(observed)]}
    memo = memo_path(options)
    try:  # a memo that cannot be written only makes the next run a whole one
        key = _mac_key(create=True)
        if key is not None:
            memo.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(memo, json.dumps({**body, "mac": _mac(body, key)}))
    except OSError:
        memo.unlink(missing_ok=True)


def summary(answer: NoopAnswer) -> str:
    return (f"{answer.release_dir.name}: nothing to do: the registry holds every image, "
            f"signature, SBOM and tag as the last complete run left them ({answer.checked} "
            f"references asked in {answer.seconds:.2f} s); nothing built, validated, pushed "
            f"or moved; its record: {answer.release_dir / 'release.json'}")


def _read_memo(options: ReleaseOptions, inputs: str) -> Memo | None:
    """The memo when this host signed it for these very inputs, else None."""
    key = _mac_key(create=False)
    try:
        body = json.loads(memo_path(options).read_text(encoding="utf-8"))
        mac = str(body.pop("mac"))
    except (OSError, ValueError, KeyError, AttributeError, TypeError):
        return None
    if key is None or not hmac.compare_digest(mac, _mac(body, key)):
        return None
    if body.get("version") != MEMO_VERSION or body.get("fingerprint") != inputs:
        return None
    rows = body["references"]  # signed by this host: written by `remember` as it is read
    return Memo(str(body["registry"]), Path(body["record"]), str(body["record_sha256"]),
                [(kind, name, ref) for kind, name, ref, _ in rows], [row[3] for row in rows])


def _answers(registry: HttpRegistry, references: list[Reference]) -> list[str | None]:
    """What the registry holds for each reference: a manifest's digest, `blob` for a blob it
    has, None for one it lacks."""
    def answer(reference: Reference) -> str | None:
        kind, name, ref = reference
        if kind == "blob":
            return "blob" if registry.has_blob(name, ref) else None
        return registry.manifest_digest(name, ref)
    with ThreadPoolExecutor(WORKERS) as pool:
        return list(pool.map(answer, references))


def fingerprint(options: ReleaseOptions) -> str:
    """One digest of everything that decides what a release run does (the module's list)."""
    digest = hashlib.sha256(f"ngc-builder no-op memo {MEMO_VERSION}\n".encode())
    for label, data in _inputs(options):
        digest.update(f"{label}\0{len(data)}\0".encode())
        digest.update(data)
    return digest.hexdigest()


def _inputs(options: ReleaseOptions) -> Iterator[tuple[str, bytes]]:
    manifest = options.manifest.resolve()
    root = (options.root or default_root(manifest)).resolve()
    # What is printed is not what is done: a --json or --quiet run leaves a memo for any run.
    shown = dataclasses.asdict(dataclasses.replace(options, show_logs=True, as_json=False))
    yield "options", json.dumps(shown, sort_keys=True, default=_absolute).encode()
    yield "gpu", gpu_mode().encode()
    yield "settings", json.dumps(sorted((name, value) for name, value in os.environ.items()
                                        if name.startswith("NGC_"))).encode()
    yield "signing key", configured_key_text() or b""
    sites = [root / SITE_FILE, options.site, setting("NGC_SITE")]
    for path in [manifest, lock_path(manifest), *(Path(p) for p in sites if p)]:
        yield f"file {path}", _file_sha256(path).encode()
    for folder in (*(root / name for name in PROJECT_FOLDERS),
                   Path(ngc_builder.__file__).parent):
        yield from _tree(folder)


def _tree(folder: Path) -> Iterator[tuple[str, bytes]]:
    """Each file under `folder` (links followed, each folder once) by its path and bytes."""
    seen: set[str] = set()
    for top, folders, files in os.walk(folder, followlinks=True):
        real = os.path.realpath(top)
        if real in seen:
            folders.clear()
            continue
        seen.add(real)
        folders[:] = sorted(name for name in folders if name != "__pycache__")
        for name in sorted(files):
            yield f"file {os.path.join(top, name)}", _file_sha256(Path(top, name)).encode()


def _absolute(value: object) -> str:
    return str(Path(str(value)).resolve()) if isinstance(value, Path) else str(value)


def _file_sha256(path: Path) -> str:
    """The file's sha256, or "" for one that cannot be read (absent: another input)."""
    try:
        return file_sha256(path)
    except OSError:
        return ""


def _mac(body: dict[str, object], key: bytes) -> str:
    return hmac.new(key, json.dumps(body, sort_keys=True).encode(), "sha256").hexdigest()


def _mac_key(create: bool) -> bytes | None:
    """This host's key for memos (made once, readable by its owner only)."""
    path = state_dir() / MAC_KEY_FILE
    if not path.exists() and create:
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # another run made it first
            pass
        else:
            with os.fdopen(handle, "wb") as out:
                out.write(secrets.token_bytes(KEY_BYTES))
    try:
        key = path.read_bytes()
    except OSError:
        return None
    return key if len(key) >= KEY_BYTES else None  # one cut short is no key
