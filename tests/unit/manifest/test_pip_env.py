"""Resolving wheels for an image keeps the host's index settings and nothing else of its pip
configuration: a constraint file capping torch on the build host is not the image's."""

from __future__ import annotations

import os

import pytest

from ngc_builder.manifest.pip_env import resolution_env

pytestmark = pytest.mark.unit

DEBUG = """\
env_var:
  PIP_DEFAULT_TIMEOUT='180'
env:
global:
  /etc/xdg/pip/pip.conf, exists: True
    global.constraint: /etc/xdg/pip/constraints.txt
    global.index-url: https://pypi.example.com/simple
  /etc/pip.conf, exists: True
    global.cert: /etc/ssl/certs/ca-certificates.crt
    global.require-virtualenv: true
site:
  /venv/pip.conf, exists: False
user:
  /root/.config/pip/pip.conf, exists: True
    install.index-url: https://install.example.com/simple
    global.extra-index-url: https://mirror.example.com/simple https://other.example.com/simple
"""


@pytest.fixture(autouse=True)
def plain_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in [k for k in os.environ if k.startswith("PIP_")]:
        monkeypatch.delenv(key)


def test_no_configuration_file_is_read_and_the_constraint_is_gone() -> None:
    env = resolution_env(DEBUG).variables
    assert env["PIP_CONFIG_FILE"] == os.devnull
    assert "PIP_CONSTRAINT" not in env and "PIP_REQUIRE_VIRTUALENV" not in env


def test_index_settings_of_the_files_come_back_as_variables_with_their_origin() -> None:
    env = resolution_env(DEBUG)
    assert env.variables["PIP_INDEX_URL"] == "https://install.example.com/simple"  # install.
    assert env.variables["PIP_EXTRA_INDEX_URL"] == (
        "https://mirror.example.com/simple https://other.example.com/simple")
    assert env.variables["PIP_CERT"] == "/etc/ssl/certs/ca-certificates.crt"
    assert "index-url (from /root/.config/pip/pip.conf)" in env.applied
    assert "cert (from /etc/pip.conf)" in env.applied


def test_variables_win_over_files_and_host_only_variables_are_dropped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PIP_INDEX_URL", "https://from-env.example.com/simple")
    monkeypatch.setenv("PIP_CONSTRAINT", "/etc/caps.txt")
    env = resolution_env(DEBUG)
    assert env.variables["PIP_INDEX_URL"] == "https://from-env.example.com/simple"
    assert "PIP_CONSTRAINT" not in env.variables
    assert "PIP_INDEX_URL (environment)" in env.applied
    assert not any(item.startswith("index-url") for item in env.applied)


def test_an_empty_configuration_adds_nothing() -> None:
    env = resolution_env("")
    assert {key for key in env.variables if key.startswith("PIP_")} == {"PIP_CONFIG_FILE"}
    assert env.applied == []
