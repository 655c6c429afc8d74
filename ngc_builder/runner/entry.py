"""The images' entrypoint: a banner on stderr, the site hooks of /opt/ngc/entrypoint.d
(runner/hooks.py), then the given command, unchanged.

``ENTRYPOINT ["python", "-I", "-m", "ngc_runner.entry"]`` with ``CMD ["/bin/bash"]``. As PID 1
(plain ``docker run``) it stays as a minimal init: the command runs as its child in its own
process group (in the terminal's foreground when there is one), every catchable signal is
forwarded to that group, orphans are reaped, and the container exits with the command's
status, or 128 + N when signal N ended it (the shell's convention). A command run as PID 1
directly would ignore SIGTERM (the kernel drops default-action signals to init), so
``docker stop`` would wait out its timeout and kill. Not PID 1 (Apptainer, enroot, ``docker
run --init``), it simply becomes the command: signals then reach it unchanged.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys

from .banner import print_banner
from .hooks import HookFailed, run_hooks

FORWARDED = [signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1,
             signal.SIGUSR2, signal.SIGWINCH, signal.SIGCONT]
DEFAULT_COMMAND = ["/bin/bash"]
HOOK_FAILED = 1  # the container's exit status when a site hook failed


def main(argv: list[str]) -> int:
    command = argv or DEFAULT_COMMAND
    print_banner()
    try:
        run_hooks()
    except HookFailed as exc:
        print(f"ngc entrypoint: {exc}; {command[0]} was not started", file=sys.stderr)
        return HOOK_FAILED
    if os.getpid() != 1:
        return become(command)
    return supervise(command)


def become(command: list[str]) -> int:
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        return not_started(command, exc)
    return 0  # not reached: execvp replaced this process


def not_started(command: list[str], exc: OSError) -> int:
    """What a shell answers: 127 when there is no such command, 126 when it cannot run."""
    print(f"ngc entrypoint: {command[0]}: {exc.strerror}", file=sys.stderr)
    return 127 if isinstance(exc, FileNotFoundError) else 126


def supervise(command: list[str]) -> int:
    blocked = set(FORWARDED) | {signal.SIGCHLD}
    signal.pthread_sigmask(signal.SIG_BLOCK, blocked)
    try:
        child = os.fork()
    except OSError as exc:
        return not_started(command, exc)
    if child == 0:
        start_child(command)
    return wait_for(child, blocked)


def start_child(command: list[str]) -> None:
    """In the forked child: own process group, the terminal if any, default signals, exec."""
    os.setpgid(0, 0)
    take_terminal()
    signal.pthread_sigmask(signal.SIG_SETMASK, set())
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        os._exit(not_started(command, exc))


def take_terminal() -> None:
    if not os.isatty(0):
        return
    handler = signal.signal(signal.SIGTTOU, signal.SIG_IGN)  # we are not in the foreground yet
    with contextlib.suppress(OSError):
        os.tcsetpgrp(0, os.getpgrp())
    signal.signal(signal.SIGTTOU, handler)


def wait_for(child: int, blocked: set[signal.Signals]) -> int:
    """Forward signals to the child's group and reap every exited process until it is gone."""
    while True:
        number = signal.sigwait(blocked)
        if number != signal.SIGCHLD:
            forward(child, number)
            continue
        status = reap(child)
        if status is not None:
            return status


def forward(child: int, number: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(child, number)


def reap(child: int) -> int | None:
    """Collect every exited process; the child's exit code when it was one of them."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return None
        if pid == 0:
            return None
        if pid == child:
            code = os.waitstatus_to_exitcode(status)
            return 128 - code if code < 0 else code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
