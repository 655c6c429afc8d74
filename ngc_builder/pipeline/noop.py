"""A re-run of a release that has nothing to do, answered without loading the manifest,
rendering, planning or the engine: from a memo of what the last complete run left in the
registry.

A run that published every selected image (pushed or found, signed, promoted; nothing failed
but the expected failures) writes the memo: every registry reference that run read or wrote
(manifests by tag or digest, blobs), each with what the run itself last saw the registry hold
for it (never a later look), signed together with a fingerprint of what decides what a run
does, taken before the run read any of it. A later run with the same fingerprint asks the
registry about each reference once more (a HEAD each, in parallel); when every answer is the
memo's, it stops there: the whole run would read the same registry, find every image
published, signed and tagged, and change nothing.

The fingerprint (pipeline/fingerprint.py) is never written anywhere: the memo holds only an
HMAC over it with this host's key, so a reader of the memo cannot test guesses of secret NGC_
values offline.

Anything else falls through to the whole run: no memo, another fingerprint, a reference moved
or gone, a registry that does not answer, a record changed since, a memo this host did not
sign (an HMAC with a key of the state folder, this user's alone: one that others could have
read is not trusted, and is replaced when a memo is next written). The memo and its folder
are never written or removed through a link. Every whole run removes the memo first, so it
never outlives the record it describes. It is not used with --json (whoever reads JSON gets
this run's record), nor on a host with GPUs (its T1 preflight runs each time).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import secrets
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ngc_builder.errors import one_line
from ngc_builder.files import (
    UnsafeFile,
    create_private,
    discard,
    file_sha256,
    read_private,
    write_private,
)
from ngc_builder.pipeline.fingerprint import fingerprint as fingerprint
from ngc_builder.pipeline.options import ReleaseOptions
from ngc_builder.records.claim import claim_release_dir
from ngc_builder.redact import strip_userinfo
from ngc_builder.services.environment import gpu_mode, state_dir
from ngc_builder.services.registry import HttpRegistry, RegistryError, parse_registry

if TYPE_CHECKING:
    from ngc_builder.services.registry import Registry

MEMO_VERSION = 2  # 1 held the fingerprint itself
MAC_KEY_FILE = "noop-memo.key"
WORKERS = 8  # registry requests at a time
KEY_BYTES = 32
MEMO_LIMIT, KEY_LIMIT = 16 << 20, 4096  # a memo lists a few hundred references
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
    """A whole run starts: what the memo says may stop being true. A memo folder that is a
    link is left alone (`remember` says so): nothing is removed through it."""
    with contextlib.suppress(OSError):
        discard(memo_path(options))


def answered(options: ReleaseOptions, inputs: str | None) -> NoopAnswer | None:
    """The answer when the memo is of these `inputs` (their fingerprint; None: none can be
    taken) and the registry still holds everything as it says, else None."""
    if inputs is None or options.as_json or not applies(options):
        return None
    started = time.monotonic()
    memo = _read_memo(options, inputs)
    if memo is None:
        return None
    with claim_release_dir(memo.record.parent, _note):
        if _record_sha256(memo.record) != memo.record_sha256:
            return None
        try:
            found = _answers(parse_registry(memo.registry), memo.references)
        except (RegistryError, ValueError):
            return None  # the whole run says what is wrong with the registry
    if found != memo.answers:
        return None
    return NoopAnswer(memo.record.parent, len(found), time.monotonic() - started)


def remember(options: ReleaseOptions, inputs: str | None, registry: Registry,
             record: Path) -> None:
    """After a run that published every selected image: the memo of what it left. `inputs`:
    the fingerprint taken before the run read anything (a file edited while it ran must not
    pass for one it built)."""
    if inputs is None or not applies(options) or not isinstance(registry, HttpRegistry):
        return
    # What the run itself last saw or wrote, never a later look: a tag another client moved
    # while the run went on must not become what the next run accepts.
    observed = dict(registry.observed)
    body = {"version": MEMO_VERSION, "registry": registry.address,
            "record": str(record.resolve()), "record_sha256": _record_sha256(record),
            "references": [[*ref, observed[ref]] for ref in sorted(observed)]}
    try:  # a memo that cannot be written only makes the next run a whole one
        key = _mac_key(create=True)
        if key is not None:
            text = json.dumps({**body, "mac": _mac(body, inputs, key)})
            write_private(memo_path(options), strip_userinfo(text).encode())
            return
    except UnsafeFile as exc:
        _note(f"{exc.filename}: {exc.strerror}: no no-op memo kept")
    except OSError:
        pass
    forget(options)


def summary(answer: NoopAnswer) -> str:
    return (f"{answer.release_dir.name}: nothing to do: the registry holds every image, "
            f"signature, SBOM and tag as the last complete run left them ({answer.checked} "
            f"references asked in {answer.seconds:.2f} s); nothing built, validated, pushed "
            f"or moved; its record: {answer.release_dir / 'release.json'}")


def _read_memo(options: ReleaseOptions, inputs: str) -> Memo | None:
    """The memo when this host signed it for these very inputs, else None."""
    key = _mac_key(create=False)
    path = memo_path(options)
    if key is None or path.parent.is_symlink():
        return None
    try:
        body = json.loads(read_private(path, MEMO_LIMIT))
        mac = str(body.pop("mac"))
    except (OSError, ValueError, KeyError, AttributeError, TypeError):
        return None
    if not hmac.compare_digest(mac, _mac(body, inputs, key)):
        return None
    if body.get("version") != MEMO_VERSION:
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


def _record_sha256(path: Path) -> str:
    """The record's sha256, or "" for one that cannot be read."""
    try:
        return file_sha256(path)
    except OSError:
        return ""


def _mac(body: dict[str, object], inputs: str, key: bytes) -> str:
    """The memo's HMAC, over its body and the fingerprint (which it does not hold)."""
    signed = json.dumps({"body": body, "fingerprint": inputs}, sort_keys=True)
    return hmac.new(key, signed.encode(), "sha256").hexdigest()


def _mac_key(create: bool) -> bytes | None:
    """This host's key for memos (made once, this user's alone); None when there is none,
    it is cut short, or others could have read it (`create`: then it is replaced)."""
    # The state folder itself may be a link its owner made (state moved to a larger disk):
    # followed here; the key file in it never is.
    path = state_dir().resolve() / MAC_KEY_FILE
    try:
        if create:
            create_private(path, secrets.token_bytes(KEY_BYTES))
        key = read_private(path, KEY_LIMIT)
    except UnsafeFile as exc:
        if not create:
            _note(f"{exc.filename}: {exc.strerror}: no no-op memo is taken with it")
            return None
        write_private(path, secrets.token_bytes(KEY_BYTES))  # a key no one else has read
        key = read_private(path, KEY_LIMIT)
    except OSError:
        return None
    if len(key) < KEY_BYTES and create:  # cut short (a run killed while making it): a new one
        write_private(path, secrets.token_bytes(KEY_BYTES))
        key = read_private(path, KEY_LIMIT)
    return key if len(key) >= KEY_BYTES else None  # one cut short is no key


def _note(text: str) -> None:
    print(f"note: {one_line(text)}", file=sys.stderr)
