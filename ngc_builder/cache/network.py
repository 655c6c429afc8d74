"""The network builds run on, and where on it they find the package cache.

Normally the engine's default bridge. Hermetic (`release --offline`): an internal Docker
network, which has no route out; the cache listens on its gateway, the one address a build
on it can reach. Either way the build sees the cache as `ngc-cache` (extra_hosts).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Any

import docker.errors

from ngc_builder.cache.address import BUILD_HOST_NAME
from ngc_builder.errors import StepError
from ngc_builder.services.engine import Engine

DEFAULT_NETWORK = "bridge"
OFFLINE_NETWORK = "ngc-offline"


@dataclass(frozen=True)
class BuildNetwork:
    mode: str | None  # None: the engine's default network
    cache_address: str  # the gateway: the host as the build containers reach it

    def build_options(self) -> dict[str, Any]:
        return {"network_mode": self.mode, "extra_hosts": {BUILD_HOST_NAME: self.cache_address}}


def build_network(engine: Engine, offline: bool) -> BuildNetwork:
    name = OFFLINE_NETWORK if offline else DEFAULT_NETWORK
    try:
        if offline:
            _ensure_internal(engine, name)
        info = engine.api.inspect_network(name)
    except docker.errors.APIError as exc:
        raise StepError("cache", f"network {name}", str(exc.explanation or exc)) from None
    gateway = _gateway(info)
    if gateway is None:
        raise StepError("cache", f"network {name}", "has no gateway address for the cache")
    return BuildNetwork(name if offline else None, gateway)


def _ensure_internal(engine: Engine, name: str) -> None:
    try:
        info = engine.api.inspect_network(name)
    except docker.errors.NotFound:
        engine.api.create_network(name, driver="bridge", internal=True, check_duplicate=True)
        return
    if not info.get("Internal"):
        # A network of that name with a route out would make "hermetic" a false claim.
        raise StepError("cache", f"network {name}", "exists but is not internal: remove it")


def _gateway(info: dict[str, Any]) -> str | None:
    """The network's gateway; when the engine does not report one (dockerd started on a
    `docker0` that already had its address reports only the subnet), the subnet's first
    address, which is where Docker's default IPAM puts the gateway."""
    configs = (info.get("IPAM") or {}).get("Config") or []
    for config in configs:
        if config.get("Gateway"):
            return str(config["Gateway"])
    for config in configs:
        subnet = _ipv4_subnet(config.get("Subnet"))
        if subnet is not None and subnet.num_addresses > 2:
            return str(subnet.network_address + 1)
    return None


def _ipv4_subnet(text: object) -> ipaddress.IPv4Network | None:
    try:
        subnet = ipaddress.ip_network(str(text), strict=False)
    except ValueError:
        return None
    return subnet if isinstance(subnet, ipaddress.IPv4Network) else None
