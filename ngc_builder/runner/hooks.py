"""Site hooks the entrypoint runs before the command: ``/opt/ngc/entrypoint.d``, as NGC's.

A site (or a derived image, or a bind mount) drops files there. In sorted order, each
``*.txt`` is printed on stderr and each ``*.sh`` is sourced by bash: what it exports (or
unsets) is the command's environment. A hook that fails stops the start, named, so that a
job never runs without the setup its site requires (a fabric's NCCL settings, say). Other
files are ignored, as NGC's entrypoint ignores them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import TextIO

HOOK_DIR = Path("/opt/ngc/entrypoint.d")
# bash's own bookkeeping, which differs in every shell and is not a hook's doing.
_SHELL_OWN = frozenset({"_", "SHLVL", "PWD", "OLDPWD", "BASH_EXECUTION_STRING"})
# Source the hook with its output on stderr, then hand the environment back NUL-separated.
_SOURCE = '. "$1" >&2 || exit $?; exec env -0'


class HookFailed(Exception):
    """A hook that exited non-zero (or could not run); the message names it."""


def hook_files(directory: Path) -> list[Path]:
    try:
        names = sorted(entry.name for entry in os.scandir(directory) if entry.is_file())
    except OSError:
        return []  # no hook folder (or not ours to read): nothing to run
    return [directory / name for name in names if name.endswith((".sh", ".txt"))]


def hook_dir() -> Path:
    """$NGC_ENTRYPOINT_D, else the image's folder: a site may keep its hooks on a shared
    filesystem and point there in the job's environment."""
    return Path(os.environ.get("NGC_ENTRYPOINT_D") or HOOK_DIR)


def run_hooks(directory: Path | None = None, stream: TextIO = sys.stderr) -> None:
    """Run every hook of `directory` into ``os.environ``; HookFailed on the first failure."""
    for hook in hook_files(directory or hook_dir()):
        if hook.suffix == ".txt":
            _print(hook, stream)
        elif (after := source(hook)) is not None:
            _apply(after)


def _print(hook: Path, stream: TextIO) -> None:
    try:
        stream.write(hook.read_text(encoding="utf-8", errors="replace"))
        stream.flush()
    except (OSError, ValueError):
        pass  # a closed stderr, or a text the site could not write, never stops the command


def source(hook: Path) -> dict[str, str] | None:
    """The environment after sourcing `hook`; None when the hook ended the shell itself
    (`exit 0`): it changed nothing then."""
    try:
        proc = subprocess.run(["bash", "-c", _SOURCE, "ngc-hook", str(hook)],
                              stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, check=False)
    except OSError as exc:
        raise HookFailed(f"hook {hook} could not run: {exc.strerror}") from None
    if proc.returncode != 0:
        raise HookFailed(f"hook {hook} failed (exit {proc.returncode})")
    if not proc.stdout:
        return None
    pairs = (item.partition(b"=") for item in proc.stdout.split(b"\0") if item)
    return {os.fsdecode(key): os.fsdecode(value) for key, _, value in pairs}


def _apply(after: dict[str, str]) -> None:
    for key in set(os.environ) - set(after) - _SHELL_OWN:
        del os.environ[key]
    for key, value in after.items():
        if key not in _SHELL_OWN and os.environ.get(key) != value:
            os.environ[key] = value
