"""Resolving wheels for an image keeps the host's index settings and nothing else of its pip
configuration: a constraint file capping torch on the build host is not the image's."""

from __future__ import annotations

import os

import pytest

from ngc_builder.manifest.wheels import resolution_env

pytestmark = pytest.mark.unit

LISTING = """\
global.cert='/etc/ssl/certs/ca-certificates.crt'
global.constraint='/etc/xdg/pip/constraints.txt'
global.extra-index-url='https://mirror.example.com/simple https://other.example.com/simple'
global.index-url='https://pypi.example.com/simple'
install.index-url='https://install.example.com/simple'
global.require-virtualenv='true'
:env:.default-timeout='180'
"""


@pytest.fixture(autouse=True)
def plain_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in [k for k in os.environ if k.startswith("PIP_")]:
        monkeypatch.delenv(key)


def test_no_configuration_file_is_read_and_the_constraint_is_gone() -> None:
    env = resolution_env(LISTING)
    assert env["PIP_CONFIG_FILE"] == os.devnull
    assert "PIP_CONSTRAINT" not in env and "PIP_REQUIRE_VIRTUALENV" not in env


def test_index_settings_of_the_files_come_back_as_variables() -> None:
    env = resolution_env(LISTING)
    assert env["PIP_INDEX_URL"] == "https://install.example.com/simple"  # install. wins
    assert env["PIP_EXTRA_INDEX_URL"] == (
        "https://mirror.example.com/simple https://other.example.com/simple")
    assert env["PIP_CERT"] == "/etc/ssl/certs/ca-certificates.crt"


def test_variables_win_over_files_and_host_only_variables_are_dropped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PIP_INDEX_URL", "https://from-env.example.com/simple")
    monkeypatch.setenv("PIP_CONSTRAINT", "/etc/caps.txt")
    monkeypatch.setenv("PIP_DEFAULT_TIMEOUT", "60")
    env = resolution_env(LISTING)
    assert env["PIP_INDEX_URL"] == "https://from-env.example.com/simple"
    assert env["PIP_DEFAULT_TIMEOUT"] == "60"
    assert "PIP_CONSTRAINT" not in env


def test_an_empty_configuration_adds_nothing() -> None:
    env = resolution_env("")
    assert {key for key in env if key.startswith("PIP_")} == {"PIP_CONFIG_FILE"}
