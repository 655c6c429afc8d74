"""Where builds run: the default bridge, or an internal network with no route out."""

from __future__ import annotations

import pytest

from ngc_builder.cache.network import OFFLINE_NETWORK, build_network
from ngc_builder.errors import StepError
from tests.unit.fake_engine import FakeClient, FakeEngine

pytestmark = pytest.mark.unit


def test_default_builds_reach_the_cache_on_the_bridge_gateway() -> None:
    network = build_network(FakeClient(FakeEngine()), offline=False)
    assert network.build_options() == {"network_mode": None,
                                       "extra_hosts": {"ngc-cache": "172.17.0.1"}}


def test_offline_builds_get_an_internal_network_made_once() -> None:
    engine = FakeEngine()
    first = build_network(FakeClient(engine), offline=True)
    second = build_network(FakeClient(engine), offline=True)
    assert first == second and first.mode == OFFLINE_NETWORK
    assert engine.calls_of("network") == [("network", OFFLINE_NETWORK, "bridge", True)]
    assert first.cache_address != "172.17.0.1"


def test_a_network_of_that_name_with_a_route_out_is_refused() -> None:
    engine = FakeEngine()
    engine.networks[OFFLINE_NETWORK] = "10.0.0.1"
    client = FakeClient(engine)
    client.api.internal = False
    with pytest.raises(StepError, match="exists but is not internal"):
        build_network(client, offline=True)


def test_a_bridge_reporting_only_its_subnet_has_its_first_address_as_gateway() -> None:
    # What dockerd reports for `bridge` when docker0 had its address before it started.
    client = FakeClient(FakeEngine())
    client.api.inspect_network = lambda name: {  # type: ignore[method-assign,assignment]
        "Name": name, "IPAM": {"Config": [{"Subnet": "172.18.0.0/16"}]}}
    assert build_network(client, offline=False).cache_address == "172.18.0.1"
    client.api.inspect_network = lambda name: {  # type: ignore[method-assign,assignment]
        "Name": name, "IPAM": {"Config": [{"Subnet": "fd00::/64"}]}}
    with pytest.raises(StepError, match="has no gateway address"):
        build_network(client, offline=False)
