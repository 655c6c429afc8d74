"""Where the release's signing key is kept, and how its files are read, without decrypting it
(cryptography is not needed to know which key a run would sign with).

A private key file is read only when it is this user's alone (files.read_private): a key
others can read is a key others can sign with (the builder's own has no password), so it is
refused in one line saying how to make it private, never used silently. A public key may be
readable by all, never writable by others."""

from __future__ import annotations

import os
from pathlib import Path

from ngc_builder.errors import InputError, Problem
from ngc_builder.files import UnsafeFile, read_private
from ngc_builder.services.environment import setting, state_dir

KEY_FILE, PUBLIC_FILE = "cosign.key", "cosign.pub"
KEY_LIMIT = 64 << 10  # a cosign key file is under 1 KB


def key_folder() -> Path:
    """The builder's own key pair, made once where NGC_SIGNING_KEY names none."""
    return state_dir() / "signing"


def read_key_file(path: Path, public: bool = False) -> str:
    """A key file's text; InputError `PATH:1: key: what is wrong` when it is not a private
    (or, `public`, an owned) regular file of at most KEY_LIMIT bytes, or not text."""
    try:
        return read_private(path, KEY_LIMIT, others_may_read=public).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError([_problem(path, getattr(exc, "strerror", None)
                                   or "not a text file")]) from None


def configured_key_text() -> bytes | None:
    """The (encrypted) private key a release would sign with, as stored; None when there is
    none yet or it cannot be read (signing then says why). One that is not this user's alone,
    or not a regular file: InputError, at once (before a run writes anything)."""
    configured = setting("NGC_SIGNING_KEY") or ""
    if configured.startswith("env://"):
        text = os.environ.get(configured.removeprefix("env://"))
        return text.encode() if text else None
    path = Path(configured) if configured else key_folder() / KEY_FILE
    try:
        return read_private(path, KEY_LIMIT)
    except UnsafeFile as exc:
        raise InputError([_problem(path, exc.strerror or "")]) from None
    except OSError:
        return None


def _problem(path: Path, reason: str) -> Problem:
    return Problem(str(path), 1, "key", reason)
