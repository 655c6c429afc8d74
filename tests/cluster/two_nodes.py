"""A real two-node Slurm cluster on this one machine, for `release --on slurm`.

Each node is a network namespace with its own address, its own hostname and its own dockerd
(its own data root, bridge and iptables, all inside the namespace); its slurmd runs in a mount
namespace where `/var/run/docker.sock` is that node's engine, so a job on it builds there and
nowhere else. slurmctld and a munged of the cluster's own (its own key and socket) run beside
them on their own ports, so the one-node cluster of `make slurm` (ci/setup-slurm.sh) is left
alone. Nodes reach the machine at HUB (a veth into a hub namespace that holds the bridge:
this machine's FORWARD policy drops bridged traffic), where the test's registry listens.

Found by hand before it was written (docs/scale.md): daemons go in with `nsenter --net`, since
`ip netns exec` remounts /sys and slurmd then finds no cgroup filesystem; jobs are submitted
`--no-requeue`, or a lost node's job runs a second time while the first one's process lives on.
Needs root, Debian's slurm-wlm and munge, dockerd, and iproute2.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

PREFIX = "ngc2"  # every netns and link of the cluster's (at most 15 characters per link)
SUBNET = "10.222.7"
HUB = f"{SUBNET}.1"
NODES = ("node1", "node2")
ARM64_PARTITION = "arm64"
CONTROLLER_PORT, NODE_PORT = 7817, 7818
TOOLS = ("slurmctld", "slurmd", "sbatch", "munged", "munge", "dockerd", "nsenter", "unshare",
         "ip")
UP_SECONDS = 90.0
# The plugins and policies ci/setup-slurm.sh's one-node cluster runs with too.
PLUGINS = Path(__file__).resolve().parents[2] / "ci" / "slurm-plugins.conf"


def unavailable() -> str | None:
    """Why the cluster cannot be started here, or None."""
    if os.geteuid() != 0:
        return "needs root (network namespaces, a munged and slurmd of its own)"
    missing = [tool for tool in TOOLS if shutil.which(tool) is None]
    return f"missing {', '.join(missing)} (make slurm installs Slurm)" if missing else None


def _run(*command: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=120)
    if check and done.returncode != 0:
        raise RuntimeError(f"two-node cluster: {' '.join(command)}: exit {done.returncode}: "
                           f"{done.stderr.strip()[-800:]}")
    return done


@dataclass(frozen=True)
class NodeEngine:
    host: str

    def env(self) -> dict[str, str]:
        kept = {k: v for k, v in os.environ.items() if not k.startswith("DOCKER_")}
        return {**kept, "DOCKER_HOST": self.host}


@dataclass
class TwoNodes:
    folder: Path
    registry_port: int

    @property
    def conf(self) -> Path:
        return self.folder / "slurm.conf"

    @property
    def env(self) -> dict[str, str]:
        """The Slurm commands' environment for this cluster (submit side)."""
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    def node_index(self, node: str) -> int:
        return NODES.index(node) + 1

    def netns(self, node: str) -> str:
        return f"{PREFIX}n{self.node_index(node)}"

    def engine(self, node: str) -> str:
        return f"unix://{self.folder / node / 'docker.sock'}"

    def node_engine(self, node: str) -> NodeEngine:
        return NodeEngine(self.engine(node))

    def scontrol(self, *words: str) -> str:
        return subprocess.run(["scontrol", *words], capture_output=True, text=True,
                              check=True, env=self.env, timeout=60).stdout

    def node_state(self, node: str) -> str:
        for word in self.scontrol("show", "node", node, "-o").split():
            if word.startswith("State="):
                return word.removeprefix("State=")
        return "UNKNOWN"

    def pid(self, name: str) -> int | None:
        with contextlib.suppress(OSError, ValueError):
            return int((self.folder / "run" / f"{name}.pid").read_text().strip())
        return None

    # -- start -----------------------------------------------------------------------------

    def start(self) -> None:
        for sub in ("state", "run", "log", "munge", *NODES, *(f"spool/{n}" for n in NODES)):
            (self.folder / sub).mkdir(parents=True, exist_ok=True)
        _net_up()
        self._munge()
        self.conf.write_text(self._slurm_conf())
        for node in NODES:
            self.start_engine(node)
        _run("unshare", "--uts", "sh", "-c", f"hostname {PREFIX}ctl; exec slurmctld -f "
             f"{self.conf} -i")
        self._wait(lambda: subprocess.run(["scontrol", "ping"], env=self.env,
                                          capture_output=True).returncode == 0, "slurmctld")
        for node in NODES:
            self.start_slurmd(node)
        self._wait(lambda: all(self.node_state(n) == "IDLE" for n in NODES), "both nodes idle")

    def _munge(self) -> None:
        munge = self.folder / "munge"
        shutil.chown(munge, "munge", "munge")
        key = munge / "munge.key"
        key.write_bytes(secrets.token_bytes(1024))
        shutil.chown(key, "munge", "munge")
        key.chmod(0o400)
        _run("runuser", "-u", "munge", "--", "munged", f"--socket={munge / 'munge.socket'}",
             f"--key-file={key}", f"--pid-file={munge / 'munged.pid'}",
             f"--log-file={munge / 'munged.log'}", f"--seed-file={munge / 'munged.seed'}")

    def _slurm_conf(self) -> str:
        folder = self.folder
        nodes = "\n".join(
            f"NodeName={node} NodeAddr={SUBNET}.1{i} CPUs=2 Boards=1 SocketsPerBoard=1 "
            "CoresPerSocket=2 ThreadsPerCore=1 RealMemory=1000 State=UNKNOWN"
            for i, node in enumerate(NODES, 1))
        return f"""# tests/cluster/two_nodes.py
ClusterName={PREFIX}
SlurmctldHost={PREFIX}ctl({HUB})
SlurmctldPort={CONTROLLER_PORT}
SlurmdPort={NODE_PORT}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket={folder}/munge/munge.socket
CredType=cred/munge
StateSaveLocation={folder}/state
SlurmdSpoolDir={folder}/spool/%n
SlurmctldPidFile={folder}/run/slurmctld.pid
SlurmdPidFile={folder}/run/slurmd-%n.pid
SlurmctldLogFile={folder}/log/slurmctld.log
SlurmdLogFile={folder}/log/slurmd-%n.log
{PLUGINS.read_text().strip()}
# A lost node is DOWN (its job NODE_FAIL) within about 30 s, not the default's 5 minutes.
SlurmdTimeout=10
{nodes}
PartitionName=build Nodes=ALL Default=YES MaxTime=INFINITE State=UP
# A site's arm64 (Grace) nodes, as `arm64_partition` names them: here the second node, an
# amd64 one, runs their jobs' images under QEMU (the plumbing, not Grace's numerics).
PartitionName={ARM64_PARTITION} Nodes={NODES[1]} MaxTime=INFINITE State=UP
"""

    def start_engine(self, node: str) -> None:
        """The node's dockerd, all its state in the node's folder, inside its namespace."""
        home = self.folder / node
        (home / "daemon.json").write_text('{"deprecated-key-path": "%s"}' % (home / "key.json"))
        log = (home / "dockerd.log").open("ab")
        environment = {k: v for k, v in os.environ.items() if not k.startswith("DOCKER_")}
        subprocess.Popen(
            ["nsenter", f"--net=/run/netns/{self.netns(node)}", "dockerd",
             "--config-file", str(home / "daemon.json"), "--data-root", str(home / "data"),
             "--exec-root", str(home / "exec"), "--pidfile", str(home / "docker.pid"),
             "-H", self.engine(node), f"--insecure-registry={HUB}:{self.registry_port}"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, env=environment,
            start_new_session=True)
        self._wait(lambda: subprocess.run(["docker", "-H", self.engine(node), "info"],
                                          capture_output=True).returncode == 0,
                   f"{node}'s dockerd")

    def start_slurmd(self, node: str) -> None:
        socket = self.folder / node / "docker.sock"
        _run("nsenter", f"--net=/run/netns/{self.netns(node)}", "unshare", "--uts", "--mount",
             "--propagation", "slave", "sh", "-c",
             f"hostname {node} && mount --bind {socket} /var/run/docker.sock && "
             f"exec slurmd -f {self.conf}")

    def _wait(self, ready: object, what: str) -> None:
        deadline = time.monotonic() + UP_SECONDS
        while time.monotonic() < deadline:
            if callable(ready) and ready():
                return
            time.sleep(0.2)
        raise RuntimeError(f"two-node cluster: {what} not up within {UP_SECONDS:.0f} s "
                           f"(logs: {self.folder / 'log'})")

    # -- faults ----------------------------------------------------------------------------

    def lose_node(self, node: str) -> None:
        """The node gone: its slurmd, its engine and every process of its namespace killed."""
        for pid in _netns_pids(self.netns(node)):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        slurmd = self.pid(f"slurmd-{node}")
        if slurmd is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(slurmd, signal.SIGKILL)

    def bring_back(self, node: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            (self.folder / node / "docker.pid").unlink()
        self.start_engine(node)
        self.start_slurmd(node)
        self._wait(lambda: self.node_state(node) == "IDLE", f"{node} back")

    # -- stop ------------------------------------------------------------------------------

    def stop(self) -> None:
        if self.conf.is_file():
            subprocess.run(["scancel", "--full", "--user=root"], env=self.env,
                           capture_output=True, check=False, timeout=60)
        for name in (*(f"slurmd-{n}" for n in NODES), "slurmctld"):
            _stop(self.pid(name), self.folder)
        for node in NODES:
            _stop(_read_pid(self.folder / node / "docker.pid"), self.folder)
            for pid in _netns_pids(self.netns(node)):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        _stop(_read_pid(self.folder / "munge" / "munged.pid"), self.folder)
        mounts = _run("findmnt", "-rn", "-o", "TARGET", check=False).stdout.split()
        for target in sorted((m for m in mounts if m.startswith(f"{self.folder}/")),
                             reverse=True):
            _run("umount", "-l", target, check=False)
        _net_down()


def _read_pid(path: Path) -> int | None:
    with contextlib.suppress(OSError, ValueError):
        return int(path.read_text().strip())
    return None


def _stop(pid: int | None, owner: Path, seconds: float = 20.0) -> None:
    """SIGTERM, then SIGKILL, to `pid` if it is still a daemon of the cluster in `owner` (its
    command line names that folder): a pid file outlives its process, and pids are reused."""
    if pid is None or str(owner).encode() not in _cmdline(pid):
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            os.kill(pid, 0)
            if _zombie(pid):
                return
            time.sleep(0.1)
        os.kill(pid, signal.SIGKILL)


def _cmdline(pid: int) -> bytes:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    return b""


def _zombie(pid: int) -> bool:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1].startswith("Z")
    return True


def _netns_pids(netns: str) -> list[int]:
    found = _run("ip", "netns", "pids", netns, check=False).stdout.split()
    return [int(pid) for pid in found if pid.isdigit()]


def _net_up() -> None:
    """Hub namespace with the bridge; this machine at HUB; each node at SUBNET.1N."""
    _net_down()  # what a killed session left
    hub = f"{PREFIX}hub"
    commands = [["ip", "netns", "add", hub], ["ip", "-n", hub, "link", "set", "lo", "up"],
                ["ip", "-n", hub, "link", "add", "br0", "type", "bridge"],
                ["ip", "-n", hub, "link", "set", "br0", "up"],
                ["ip", "link", "add", f"{PREFIX}h0", "type", "veth", "peer", "name", "h0",
                 "netns", hub],
                ["ip", "addr", "add", f"{HUB}/24", "dev", f"{PREFIX}h0"],
                ["ip", "link", "set", f"{PREFIX}h0", "up"],
                ["ip", "-n", hub, "link", "set", "h0", "master", "br0"],
                ["ip", "-n", hub, "link", "set", "h0", "up"]]
    for i in range(1, len(NODES) + 1):
        node = f"{PREFIX}n{i}"
        commands += [["ip", "netns", "add", node], ["ip", "-n", node, "link", "set", "lo", "up"],
                     ["ip", "link", "add", f"{PREFIX}v{i}", "netns", node, "type", "veth",
                      "peer", "name", f"p{i}", "netns", hub],
                     ["ip", "-n", node, "link", "set", f"{PREFIX}v{i}", "name", "eth0"],
                     ["ip", "-n", node, "addr", "add", f"{SUBNET}.1{i}/24", "dev", "eth0"],
                     ["ip", "-n", node, "link", "set", "eth0", "up"],
                     ["ip", "-n", node, "route", "add", "default", "via", HUB],
                     ["ip", "-n", hub, "link", "set", f"p{i}", "master", "br0"],
                     ["ip", "-n", hub, "link", "set", f"p{i}", "up"]]
    for command in commands:
        _run(*command)


def _net_down() -> None:
    """The namespaces gone, with whatever still runs in a node's (a killed session's)."""
    for i in range(1, len(NODES) + 1):
        for pid in _netns_pids(f"{PREFIX}n{i}"):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        _run("ip", "netns", "del", f"{PREFIX}n{i}", check=False)
    _run("ip", "netns", "del", f"{PREFIX}hub", check=False)
    _run("ip", "link", "del", f"{PREFIX}h0", check=False)


def sweep_leftovers() -> list[Path]:
    """What a killed session left (its daemons by their pid files, its mounts, its folder):
    its slurmctld would still hold the controller's port. Returns the folders removed."""
    swept = []
    for folder in sorted(Path(tempfile.gettempdir()).glob(f"{PREFIX}-*")):
        if folder.is_dir() and not folder.is_symlink():
            TwoNodes(folder, 0).stop()
            shutil.rmtree(folder, ignore_errors=True)
            swept.append(folder)
    return swept


@contextlib.contextmanager
def two_nodes(registry_port: int) -> Iterator[TwoNodes]:
    """The cluster up (its nodes idle), torn down on the way out whatever happened."""
    sweep_leftovers()
    folder = Path(tempfile.mkdtemp(prefix=f"{PREFIX}-", dir="/tmp"))  # short: socket paths
    folder.chmod(0o755)  # munged, as the munge user, reaches its folder through it
    cluster = TwoNodes(folder, registry_port)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(folder, ignore_errors=True)
