"""A registry nobody answers for reads as the OS's reason, not urllib3's nested reprs."""

from __future__ import annotations

import pytest

from ngc_builder.services.registry import RegistryUnavailable, parse_registry
from tests.integration.registries import free_port

pytestmark = pytest.mark.unit


def test_a_refused_connection_is_said_in_a_few_words(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NGC_RETRIES", "1")
    address = f"127.0.0.1:{free_port()}"  # nothing listens there
    with pytest.raises(RegistryUnavailable) as refused:
        parse_registry(f"{address}/team").manifest_digest("jax", "26.11-py3")
    assert str(refused.value) == (f"http://{address}/v2/team/jax/manifests/26.11-py3: "
                                  "ConnectionError: Connection refused (gave up after 1 attempts)")
