"""A second, throwaway Docker engine on this machine, for fault tests.

Fault tests kill dockerd mid-build or fill its disk; that must never happen to the main engine,
which other work (and the rest of the test session) runs against. So `second_engine` starts
another real dockerd with all its state in a folder the caller gives (a pytest tmp_path
subfolder): its own data-root, exec-root (and so its own managed containerd), pidfile, socket
and log. It shares nothing the main engine owns:

- Bridge: the main engine holds `docker0`, and `--bip` cannot rename the bridge, so the fixture
  makes a bridge of its own (`ngce-<hex>`) and hands it over with `--bridge`; it and the
  user-defined networks (`release --offline` makes the internal `ngc-offline` one and serves
  the package cache on its gateway) get addresses from a /16 in 10.0.0.0/8 that no route or
  interface of this machine uses, through `--default-address-pool`. Restarted on a store that
  holds networks, dockerd 20.10 with address pools deletes the interface named docker0 (the
  main engine's, whatever --bridge says), so `start` drops the network store before a
  restart: a restarted second engine has lost its networks (see `_forget_networks`).
- iptables: with `--iptables` (the default) dockerd 20.10 deletes and recreates the DOCKER and
  DOCKER-ISOLATION chains when it starts, which would drop the main engine's rules. So
  `--iptables=false` (and `--ip-forward=false`: the host's sysctl is the main engine's).
  The price: this engine does not itself fence "internal" networks; their containers still
  get a default route to the gateway, and what keeps them from the outside is the host's
  FORWARD policy (DROP, set by the main engine) and the missing NAT. Traffic from a container
  to the gateway (the cache) goes through INPUT and works.
- Disk: with `data_root_size` the data-root is a tmpfs of that size (overlay2 works on tmpfs
  on this kernel; `docker info` says "Backing Filesystem: tmpfs"), so a full disk is a real
  ENOSPC for this engine alone.

Teardown runs even when the test failed: containers and networks removed through the engine
(restarted first if the test killed it, since its restore kills what still runs), dockerd
stopped, leftovers killed by PID, mounts under the folder unmounted, the bridges it made
deleted, then the folder removed. Needs root (mount, ip link), like the main engine's setup.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from tests.faults.engine_os import alive, arguments, bridges_in, free_subnet, half, run, tool
from tests.faults.engine_teardown import teardown

START_SECONDS = 60.0
STOP_SECONDS = 60.0
# sun_path holds 108 bytes with its NUL, and containerd refuses more than 104; the longest
# sockets this engine makes are its containerd's (ttrpc, debug), in the exec-root.
SOCKET_PATH_MAX = 103
LONGEST_SOCKET = "run/containerd/containerd.sock.ttrpc"
# Variables that would move this dockerd's or this CLI's state or target elsewhere.
DOCKER_ENV_DROPPED = ("DOCKER_HOST", "DOCKER_CONTEXT", "DOCKER_TLS_VERIFY", "DOCKER_CERT_PATH",
                      "DOCKER_TMPDIR")


@dataclass
class SecondEngine:
    """One dockerd of the fixture's; `start`/`stop`/`kill` it as a fault test needs."""

    folder: Path
    bridge: str  # the engine's default bridge, made by the fixture
    subnet: ipaddress.IPv4Network  # every address this engine hands out
    pid: int = 0  # the current (or last) dockerd's PID
    listen: tuple[str, ...] = ()  # more --host addresses (tcp://, TLS set in daemon.json)
    _process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def host(self) -> str:
        return f"unix://{self.folder / 'docker.sock'}"

    @property
    def log(self) -> Path:
        return self.folder / "dockerd.log"

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def env(self) -> dict[str, str]:
        """This process's environment aimed at this engine (for the builder, docker-py)."""
        kept = {k: v for k, v in os.environ.items() if k not in DOCKER_ENV_DROPPED}
        return {**kept, "DOCKER_HOST": self.host}

    def docker(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        """`docker -H <this engine> args...`, never raising for its exit status."""
        return subprocess.run([tool("docker"), "-H", self.host, *args], capture_output=True,
                              text=True, check=False, timeout=timeout, env=self.env())

    def start(self) -> None:
        """Start dockerd on this engine's data-root; return once `docker info` answers."""
        if self.running:
            raise RuntimeError(f"dockerd {self.pid} is still running")
        if self.pid:
            self._forget_networks()
        self._forget_dead_containerd()
        with self.log.open("ab") as log:  # appended: the log of a killed run stays readable
            self._process = subprocess.Popen(
                [tool("dockerd"), *self._flags()], stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT, env=self.env(),
                start_new_session=True)  # a Ctrl-C meant for pytest must not reach it
        self.pid = self._process.pid
        self._wait_ready()

    def stop(self, sig: signal.Signals = signal.SIGTERM) -> None:
        """Send `sig` to dockerd by PID and wait until it is gone (SIGKILL after the wait)."""
        if self._process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, sig)
        try:
            # wait(), not kill(pid, 0): the PID of an unreaped child answers until reaped.
            self._process.wait(timeout=STOP_SECONDS)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait(timeout=STOP_SECONDS)
            raise TimeoutError(f"dockerd {self.pid} outlived {sig.name} for "
                               f"{STOP_SECONDS:.0f} s; killed") from None

    def kill(self) -> None:
        """SIGKILL: no shutdown at all; its containerd dies with it, its shims and containers
        do not (the next `start` restores and kills them)."""
        self.stop(signal.SIGKILL)

    def _forget_networks(self) -> None:
        """Before a restart: dockerd 20.10, started with --default-address-pool and a "bridge"
        network in its store, deletes the interface named docker0 ("Clear stale bridge
        network" in daemon_unix.go), whatever --bridge says: the MAIN engine's bridge, with
        the veths of its running containers (seen here). A store without networks never
        gets there, so it goes, and with it this engine's networks and their br-
        interfaces (which would clash with the new ones' addresses); the builder makes
        ngc-offline again."""
        for name in bridges_in(self.subnet):
            subprocess.run(["ip", "link", "delete", name], capture_output=True, check=False)
        (self.folder / "data" / "network" / "files" / "local-kv.db").unlink(missing_ok=True)

    def _forget_dead_containerd(self) -> None:
        """dockerd 20.10 adopts the containerd its pidfile names while that PID answers
        kill(pid, 0), and a zombie answers. After a SIGKILL the old containerd (killed with
        its dockerd) is a zombie until PID 1 reaps it, seconds later on this VM; a start
        meanwhile waits on its dead socket and fails ("timeout waiting for containerd to
        start"). So wait for it to be dead, then drop the pidfile: a fresh one starts."""
        containerd = self.folder / "run" / "containerd"
        with contextlib.suppress(OSError, ValueError):
            pid = int((containerd / "containerd.pid").read_text().strip())
            deadline = time.monotonic() + STOP_SECONDS
            while (alive(pid) and str(containerd / "containerd.toml") in arguments(pid)
                   and time.monotonic() < deadline):
                time.sleep(0.1)
            (containerd / "containerd.pid").unlink()

    def _flags(self) -> list[str]:
        pool = f"base={half(self.subnet, upper=True)},size=24"
        return [
            "--config-file", str(self.folder / "daemon.json"),  # not /etc/docker/daemon.json
            "--data-root", str(self.folder / "data"),
            "--exec-root", str(self.folder / "run"),
            "--pidfile", str(self.folder / "docker.pid"),
            "--host", self.host,
            *[flag for address in self.listen for flag in ("--host", address)],
            "--bridge", self.bridge,
            "--default-address-pool", pool,
            "--iptables=false",
            "--ip-forward=false",
            "--storage-driver", "overlay2",  # else a failed overlay2 check silently means vfs
        ]

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            if not self.running:
                raise RuntimeError(f"dockerd exited at start: {log_tail(self)}")
            with contextlib.suppress(subprocess.TimeoutExpired):
                if self.docker("info", "--format", "{{.ID}}", timeout=5).returncode == 0:
                    return
            time.sleep(0.2)
        self.kill()
        raise TimeoutError(f"dockerd gave no answer in {START_SECONDS:.0f} s: {log_tail(self)}")


def unavailable() -> str | None:
    """Why no second engine can run here (for pytest.skip), or None."""
    if os.geteuid() != 0:
        return "a second dockerd needs root"
    missing = [name for name in ("dockerd", "docker", "ip", "mount", "umount", "ss")
               if shutil.which(name) is None]
    return f"not installed: {', '.join(missing)}" if missing else None


@contextlib.contextmanager
def second_engine(folder: Path, data_root_size: str | None = None, listen: tuple[str, ...] = (),
                  config: dict[str, object] | None = None) -> Iterator[SecondEngine]:
    """A running second dockerd with all its state in `folder` (created, and removed at the
    end: give it a folder of its own); `data_root_size` ("3G") caps its data-root; `listen`
    adds addresses, `config` its daemon.json (TLS)."""
    folder = folder.absolute()
    _check_socket_room(folder)
    engine = SecondEngine(folder, f"ngce-{secrets.token_hex(4)}", free_subnet(), listen=listen)
    try:
        _prepare(engine, data_root_size, config or {})
        engine.start()
        yield engine
    except BaseException:
        # The test's own error is what pytest shows; the engine's view of it goes beside.
        print(f"second engine's log, last problems:\n{log_tail(engine, 10, problems=True)}",
              file=sys.stderr)
        raise
    finally:
        teardown(engine)


@contextlib.contextmanager
def engine_in_short_folder() -> Iterator[SecondEngine]:
    """A second engine, empty, its sockets in a short temporary folder (a unix socket path
    stays under 104 bytes; pytest's tmp_path is too deep)."""
    folder = Path(tempfile.mkdtemp(prefix="ngch-"))
    try:
        with second_engine(folder / "engine") as started:
            yield started
    finally:
        shutil.rmtree(folder, ignore_errors=True)


class AnEngine(Protocol):
    """What copy_image needs of an engine: a second engine, a test cluster node's."""

    @property
    def host(self) -> str: ...

    def env(self) -> dict[str, str]: ...


def copy_image(ref: str, engine: AnEngine, timeout: float = 600) -> None:
    """`docker save ref` on the main engine piped into `docker load` on `engine`: the second
    engine gets an OS base without bootstrapping it."""
    save = subprocess.Popen([tool("docker"), "save", ref], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    load = subprocess.Popen([tool("docker"), "-H", engine.host, "load", "--quiet"],
                            stdin=save.stdout, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=engine.env())
    assert save.stdout is not None and save.stderr is not None
    save.stdout.close()  # load alone holds it: if load dies, save gets EPIPE, not a hang
    try:
        _, load_error = load.communicate(timeout=timeout)
        saved, save_error = save.wait(timeout=timeout), save.stderr.read()
    finally:
        for process in (save, load):
            process.kill()  # no-op on exited ones: a timeout leaves nothing behind
            process.wait()
        save.stderr.close()
    if saved != 0 or load.returncode != 0:
        raise RuntimeError(f"copying {ref}: save: {save_error.decode().strip() or saved}; "
                           f"load: {load_error.decode().strip() or load.returncode}")


def leave_free(engine: SecondEngine, free_bytes: int) -> None:
    """Fill a size-limited data-root with a ballast file until `free_bytes` are left.

    `docker load` (copy_image, and the builder's OS step) holds the image twice while it
    unpacks, so a data-root small enough for a build to run out of room is too small to load
    the build's base into: load at a roomy size, then leave the build this little."""
    data = engine.folder / "data"
    if not os.path.ismount(data):
        raise ValueError("leave_free needs second_engine(..., data_root_size=...): it would "
                         "fill the host's disk")
    room = shutil.disk_usage(data).free - free_bytes
    if room > 0:
        with (data / "ballast").open("ab") as ballast:  # dockerd never looks at it
            os.posix_fallocate(ballast.fileno(), ballast.tell(), room)


def log_tail(engine: SecondEngine, lines: int = 5, problems: bool = False) -> str:
    """The last lines of the engine's log; `problems`: only its warnings and errors (its info
    lines are mostly containerd's gRPC chatter)."""
    if not engine.log.is_file():
        return "(no log)"
    kept = engine.log.read_text(errors="replace").splitlines()
    if problems:
        kept = [line for line in kept if re.search(r"level=(warning|error|fatal)", line)
                or not line.startswith("time=")]
    return "\n".join(kept[-lines:])


def _check_socket_room(folder: Path) -> None:
    longest = folder / LONGEST_SOCKET
    if len(str(longest)) > SOCKET_PATH_MAX:
        raise ValueError(f"{folder} is too long a path for the engine's sockets "
                         f"({len(str(longest))} > {SOCKET_PATH_MAX} characters for {longest})")


def _prepare(engine: SecondEngine, data_root_size: str | None,
             config: dict[str, object]) -> None:
    for name in ("data", "run"):
        (engine.folder / name).mkdir(parents=True, exist_ok=True)
    (engine.folder / "daemon.json").write_text(json.dumps(config) + "\n")
    if data_root_size is not None:
        run("mount", "-t", "tmpfs", "-o", f"size={data_root_size},mode=0710",
             "ngc-engine-data", str(engine.folder / "data"))
    gateway = next(half(engine.subnet, upper=False).hosts())
    run("ip", "link", "add", "name", engine.bridge, "type", "bridge")
    run("ip", "addr", "add", f"{gateway}/24", "dev", engine.bridge)
    run("ip", "link", "set", engine.bridge, "up")


