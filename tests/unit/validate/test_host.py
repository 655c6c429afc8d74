"""What host mode tells the runner: it validates a host environment, with which extras."""

from __future__ import annotations

from pathlib import Path

import pytest

from ngc_builder.manifest.framework import Framework
from ngc_builder.manifest.load import load_model
from ngc_builder.validate.hostrun import framework_facts, host_expect

pytestmark = pytest.mark.unit
FRAMEWORKS = Path(__file__).resolve().parents[3] / "frameworks"


def framework(name: str) -> Framework:
    path = FRAMEWORKS / name / "framework.yaml"
    return load_model(path, Framework, str(path))[0]


def test_extras_are_those_of_the_frameworks_own_distribution() -> None:
    jax = framework("jax")
    assert jax.extras_for("default") == ["cuda13"]  # jax[cuda13]; jaxlib is another one
    assert jax.extras_for("cpu") == []
    assert framework("pytorch").extras_for("default") == []


def test_host_expectations_say_host_mode_and_the_default_extras() -> None:
    expect = host_expect(framework_facts(FRAMEWORKS / "jax"), "0.8.1")
    assert expect["host_mode"] is True and expect["extras"] == ["cuda13"]
    assert expect["image"] == "host:jax" and expect["version"] == "0.8.1"
