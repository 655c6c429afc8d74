"""Charliecloud on this host: who runs the image, where its converted copy lives, the
command lines, and the processes that run them.

`ch-run` runs an image as its caller: the caller's UID and GID, no privilege, the image
mounted read-only, no entrypoint. Validation keeps that promise when the builder itself runs
as root (CI, `make test`): the container is then started as `nobody` (every Debian system has
it, it owns no files, and its group `nogroup` is what lets it read the converted image without
opening that to every user). A caller that is not root runs it as themselves.

Nothing here goes through a shell: every command is an argument list, so an image name is one
argument whatever it holds (and one that could be read as an option is refused before).
"""

from __future__ import annotations

import contextlib
import os
import pwd
import re
import shlex
import shutil
import signal
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ngc_builder.services.reference import reference_problem

UNPRIVILEGED = "nobody"
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# An engine's image ID, whole or cut short (`docker images` shows 12 hex digits).
IMAGE_ID_RE = re.compile(r"(sha256:)?[0-9a-f]{12,64}")


@dataclass(frozen=True)
class Account:
    """Whom ch-run runs as: the caller, or `nobody` for a root caller."""

    name: str
    uid: int
    gid: int
    home: str

    @property
    def switch(self) -> bool:
        """Whether starting ch-run means leaving this process's own UID (root -> nobody)."""
        return self.uid != os.geteuid()


def run_account(euid: int | None = None) -> Account:
    """The caller itself unless it is root; then `nobody` (KeyError when that has no entry)."""
    euid = os.geteuid() if euid is None else euid
    if euid != 0:
        return _account_of(euid)
    entry = pwd.getpwnam(UNPRIVILEGED)
    return Account(entry.pw_name, entry.pw_uid, entry.pw_gid, entry.pw_dir)


def _account_of(uid: int) -> Account:
    try:
        entry = pwd.getpwuid(uid)
    except KeyError:  # a UID with no password entry (a container's arbitrary one)
        return Account(f"uid{uid}", uid, os.getgid(), os.environ.get("HOME", "/"))
    return Account(entry.pw_name, uid, entry.pw_gid, os.environ.get("HOME", entry.pw_dir))


def is_reference(text: str) -> bool:
    """An image ID, or a name in Docker's reference grammar (services/reference.py: the one
    rule for names a person, the manifest, an engine or a registry gives): either way one no
    command could take for an option (ch-convert reads its arguments as options until the
    first that is not one) or for two arguments."""
    return IMAGE_ID_RE.fullmatch(text) is not None or reference_problem(text) is None


@dataclass(frozen=True)
class Finished:
    status: int
    stdout: str
    stderr: str


class ToolMissing(Exception):
    """The program is not installed (or not on PATH)."""


class Processes(Protocol):
    """How the builder starts Charliecloud's programs (tests hand in a fake)."""

    def run(self, argv: list[str], *, env: dict[str, str], timeout: float,
            account: Account | None = None) -> Finished:
        """`argv`'s exit status and output; as `account` when given. Raises ToolMissing, and
        subprocess.TimeoutExpired when it outlives `timeout` (it is killed first)."""
        ...


@dataclass
class SubprocessProcesses:
    """The real programs. Each runs in a process group of its own, killed whole when it times
    out or this process is interrupted: ch-convert's `docker export | gzip` included."""

    started: list[list[str]] = field(default_factory=list)

    def run(self, argv: list[str], *, env: dict[str, str], timeout: float,
            account: Account | None = None) -> Finished:
        self.started.append(argv)
        switch = account is not None and account.switch
        try:
            process = subprocess.Popen(
                argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, start_new_session=True,
                user=account.uid if switch and account else None,
                group=account.gid if switch and account else None,
                extra_groups=[] if switch else None, cwd="/")
        except FileNotFoundError:
            raise ToolMissing(argv[0]) from None
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except BaseException:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            raise
        return Finished(process.returncode, stdout.decode("utf-8", "replace"),
                        stderr.decode("utf-8", "replace"))


@contextlib.contextmanager
def private_scratch(account: Account, parent: str | None = None) -> Iterator[Path]:
    """A folder only this process and `account` can enter (0750, group `account`'s), for the
    converted image; removed with everything in it however the block ends."""
    folder = Path(tempfile.mkdtemp(prefix="ngc-charliecloud-", dir=parent))
    try:
        if account.switch:
            os.chown(folder, -1, account.gid)
            folder.chmod(0o750)
        yield folder
    finally:
        shutil.rmtree(folder, onerror=_writable_and_retry)


def _writable_and_retry(function: object, path: str, _info: object) -> None:
    """A non-root caller's copy of an image may hold folders without write permission."""
    with contextlib.suppress(OSError):
        os.chmod(os.path.dirname(path), 0o700)
        if os.path.isdir(path) and not os.path.islink(path):
            os.chmod(path, 0o700)
            shutil.rmtree(path, ignore_errors=True)
        else:
            os.unlink(path)


def unreachable_parent(folder: Path, account: Account) -> Path | None:
    """The first folder above `folder` that `account` cannot pass through (TMPDIR=/root/tmp
    for a root caller), else None: ch-run could not open the image there."""
    if not account.switch:
        return None
    for parent in reversed(folder.parents):
        mode = parent.stat()
        if mode.st_uid != account.uid and not mode.st_mode & stat.S_IXOTH:
            return parent
    return None


def convert_argv(ref: str, image_dir: Path, tmp: Path) -> list[str]:
    """ch-convert from the Docker engine's storage into a directory image (`/ch/environment`
    holds the image's ENV); its temporary tarballs go to `tmp`, inside the scratch folder."""
    return ["ch-convert", "-i", "docker", "-o", "dir", "--tmp", str(tmp), ref, str(image_dir)]


def fromhost_argv(image_dir: Path) -> list[str]:
    """The host's NVIDIA driver libraries into the image (what sites do before a GPU run)."""
    return ["ch-fromhost", "--nvidia", str(image_dir)]


def run_argv(image_dir: Path, workdir: str, command: list[str]) -> list[str]:
    """ch-run as researchers start an image: the image's ENV applied (`--set-env`), read-only
    (no `-w`), no entrypoint. `--private-tmp`: a tmpfs /tmp as validation's `docker run` has,
    not the host's (which holds the scratch folder). `--cd`: the image's WORKDIR, which
    Docker applies and ch-run does not."""
    return ["ch-run", "--private-tmp", "--cd", workdir or "/", "--set-env", str(image_dir),
            "--", *command]


def run_environment(account: Account, variables: dict[str, str]) -> dict[str, str]:
    """What ch-run passes into the image: a login's few variables and the runner's, none of the
    builder's (its proxy, credentials and Docker settings stay out)."""
    return {"PATH": DEFAULT_PATH, "HOME": account.home, "USER": account.name,
            "LOGNAME": account.name, **variables}


def person_command(argv: list[str], account: Account, env: dict[str, str]) -> str:
    """The command line a person runs to repeat it (large variables left out)."""
    shown = {key: value for key, value in env.items() if key != "NGC_BASELINES"}
    prefix = ["setpriv", f"--reuid={account.uid}", f"--regid={account.gid}",
              "--clear-groups", "--"] if account.switch else []
    return shlex.join([*prefix, "env", "-i", *(f"{k}={v}" for k, v in shown.items()), *argv])
