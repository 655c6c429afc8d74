"""Where the release's signing key is kept, without reading it (cryptography is not needed to
know which key a run would sign with)."""

from __future__ import annotations

import os
from pathlib import Path

from ngc_builder.services.environment import setting, state_dir

KEY_FILE, PUBLIC_FILE = "cosign.key", "cosign.pub"


def key_folder() -> Path:
    """The builder's own key pair, made once where NGC_SIGNING_KEY names none."""
    return state_dir() / "signing"


def configured_key_text() -> bytes | None:
    """The (encrypted) private key a release would sign with, as stored; None when there is
    none yet or it cannot be read (signing then says why)."""
    configured = setting("NGC_SIGNING_KEY") or ""
    if configured.startswith("env://"):
        text = os.environ.get(configured.removeprefix("env://"))
        return text.encode() if text else None
    path = Path(configured) if configured else key_folder() / KEY_FILE
    try:
        return path.read_bytes()
    except OSError:
        return None
