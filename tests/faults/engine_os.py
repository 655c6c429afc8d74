"""The host-level pieces the second engine needs: tools on PATH, processes by PID and exact
argument, listeners, mounts and bridges, read from /proc and `ip`/`ss`."""

from __future__ import annotations

import contextlib
import ipaddress
import json
import random
import re
import shutil
import subprocess
from pathlib import Path

# 10.0.0.0/8 is not in dockerd's default address pools (172.17-31.x, 192.168.x), so the main
# engine never hands out what this one uses.
SUBNET_CANDIDATES = [ipaddress.IPv4Network(f"10.{n}.0.0/16") for n in range(64, 255)]


def tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise RuntimeError(f"{name} is not on PATH")
    return found


def alive(pid: int) -> bool:
    """Running, as opposed to gone or a zombie (which kill(pid, 0) cannot tell apart)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def run(*args: str, timeout: float = 60) -> str:
    done = subprocess.run(args, capture_output=True, text=True, check=False, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: {done.stderr.strip() or done.returncode}")
    return done.stdout


def arguments(pid: int) -> set[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return set()
    return set(raw.decode(errors="replace").split("\0"))


def processes_with_argument(wanted: set[str]) -> list[int]:
    """By exact argument, never by substring: a pytest or `timeout` whose command line merely
    names the folder is no process of the engine's."""
    return [int(proc.name) for proc in Path("/proc").iterdir()
            if proc.name.isdigit() and wanted & arguments(int(proc.name))]


def listeners_in(subnet: ipaddress.IPv4Network) -> list[int]:
    pids = []
    for line in run("ss", "-Htlnp").splitlines():
        fields = line.split()
        address = fields[3].rpartition(":")[0] if len(fields) > 3 else ""
        with contextlib.suppress(ValueError):
            if ipaddress.IPv4Address(address) in subnet:
                pids += [int(pid) for pid in re.findall(r"pid=(\d+)", line)]
    return pids


def mounts_under(folder: Path) -> list[str]:
    points = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        # mountinfo escapes space, tab, newline and backslash in octal (\040).
        point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), line.split()[4])
        if point == str(folder) or point.startswith(f"{folder}/"):
            points.append(point)
    return points


def bridges_in(subnet: ipaddress.IPv4Network) -> set[str]:
    """The br- interfaces of this engine's user-defined networks: by address, which works
    whether dockerd still answers or not."""
    links = json.loads(run("ip", "-j", "-4", "addr", "show"))
    return {link["ifname"] for link in links if link["ifname"].startswith("br-")
            and any(ipaddress.IPv4Address(a["local"]) in subnet
                    for a in link.get("addr_info", []))}


def free_subnet() -> ipaddress.IPv4Network:
    """A /16 that no route or address of this machine overlaps, picked at random so that two
    second engines started at once are unlikely to pick the same."""
    used = host_networks()
    free = [net for net in SUBNET_CANDIDATES if not any(net.overlaps(u) for u in used)]
    if not free:
        raise RuntimeError("no free /16 in 10.64.0.0-10.254.255.255 for a second engine")
    return random.choice(free)


def host_networks() -> list[ipaddress.IPv4Network]:
    routes = json.loads(run("ip", "-j", "-4", "route", "show", "table", "all"))
    addresses = json.loads(run("ip", "-j", "-4", "addr", "show"))
    nets = [ipaddress.IPv4Network(r["dst"]) for r in routes if r.get("dst", "default") != "default"]
    nets += [ipaddress.IPv4Network(f"{a['local']}/{a['prefixlen']}", strict=False)
             for link in addresses for a in link.get("addr_info", [])]
    # A resolver reached through the default route (10.255.255.53 here) is in no route of
    # its own, and a bridge over its address would cut the engine and the host off from DNS.
    return nets + nameservers()


def nameservers() -> list[ipaddress.IPv4Network]:
    found = []
    with contextlib.suppress(OSError):
        for line in Path("/etc/resolv.conf").read_text().splitlines():
            words = line.split()
            if len(words) > 1 and words[0] == "nameserver":
                with contextlib.suppress(ValueError):
                    found.append(ipaddress.IPv4Network(words[1]))
    return found


def half(subnet: ipaddress.IPv4Network, upper: bool) -> ipaddress.IPv4Network:
    """The bridge takes a /24 from the lower half; user-defined networks get the upper."""
    return list(subnet.subnets(prefixlen_diff=1))[1 if upper else 0]
