"""A writable HOME for every Python process in an image, whoever runs it.

Shipped twice: inside ``ngc_runner`` and as the top-level ``ngc_home`` that a ``.pth`` file in
the venv imports at every interpreter start (``import`` lines in .pth files run at startup).
It must stay stdlib-only, tiny and silent.

Why: researchers start images as an arbitrary UID (``docker run --user``, OpenShift, Slurm
with pyxis), where Docker sets ``HOME=/``, and on read-only root filesystems (Apptainer's
default, ``--read-only``), where even root's ``/root`` cannot be written. Frameworks keep
caches under ``$HOME`` (Theano's compile dir, Triton, Jupyter's runtime files, matplotlib):
with no writable HOME they fail at import or at first use. When HOME is not writable, it
moves to a private directory under the temporary directory, owned by this UID (mode 0700),
and the change is inherited by every child process. A writable HOME (Apptainer binds the
user's own) is left alone.
"""

from __future__ import annotations

import contextlib
import os
import tempfile

# getpass.getuser() (used by torch.compile's cache path, among others) reads these before
# the password database, where an arbitrary UID has no entry.
USER_VARIABLES = ("LOGNAME", "USER")


def writable(path: str) -> bool:
    return bool(path) and os.path.isdir(path) and os.access(path, os.W_OK | os.X_OK)


def private_home(uid: int) -> str | None:
    """`<tmp>/home-<uid>`, created 0700 if missing; None if it is not ours or not writable."""
    path = os.path.join(tempfile.gettempdir(), f"home-{uid}")
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
        owned = os.stat(path).st_uid == uid
    except OSError:
        return None
    return path if owned and writable(path) else None


def has_passwd_entry(uid: int) -> bool:
    try:
        import pwd

        pwd.getpwuid(uid)
    except (ImportError, KeyError):
        return False
    return True


def settle(environ: os._Environ[str] | dict[str, str] = os.environ) -> str | None:
    """Point HOME somewhere writable (and name the user) when it is not; the new HOME or None."""
    uid = os.getuid()
    if not has_passwd_entry(uid):
        for name in USER_VARIABLES:
            environ.setdefault(name, f"uid{uid}")
    if writable(environ.get("HOME", "")):
        return None
    home = private_home(uid)
    if home is not None:
        environ["HOME"] = home
    return home


# A startup hook must never stop an interpreter from starting.
with contextlib.suppress(Exception):
    settle()
