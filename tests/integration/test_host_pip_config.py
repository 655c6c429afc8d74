"""A build host whose pip configuration caps torch below the release's (a managed machine's
global constraint file): the image's wheels are still resolved for the image, through the
real package index, and a cold cache says what it is waiting for."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.integration


def test_check_ignores_a_host_constraint_that_caps_torch(tmp_path: Path) -> None:
    caps = tmp_path / "constraints.txt"
    caps.write_text("torch<=2.14.1\njax<=0.10.0\n")
    config = tmp_path / "pip.conf"
    config.write_text(f"[global]\nconstraint = {caps}\n")
    env = {**os.environ, "PIP_CONFIG_FILE": str(config), "PIP_CONSTRAINT": str(caps),
           "XDG_CACHE_HOME": str(tmp_path / "cache")}  # a cold metadata cache
    # The host's own pip does see the cap, so the test would catch its leak.
    capped = subprocess.run([sys.executable, "-m", "pip", "config", "debug"], env=env,
                            capture_output=True, text=True, check=True)
    assert str(caps) in capped.stdout
    done = subprocess.run(
        [sys.executable, "-m", "ngc_builder", "check", "releases/26.11.yaml"], cwd=REPO,
        env=env, capture_output=True, text=True, check=False, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "stacks match" in done.stdout
    assert "stack check: reading the metadata of torch==2.15.0 for Python 3.13" in done.stderr


def test_lock_resolution_ignores_a_host_constraint_that_caps_torch(tmp_path: Path) -> None:
    caps = tmp_path / "constraints.txt"
    caps.write_text("torch<=2.14.1\n")
    env = {**os.environ, "PIP_CONSTRAINT": str(caps)}
    script = ("from ngc_builder.lock.pip import resolve_pip\n"
              "from ngc_builder.manifest.wheels import Target\n"
              "found = resolve_pip(['torch==2.15.0'], Target('3.13', '2.41'), [])\n"
              "print(' '.join(f'{p.name}=={p.version}' for p in found))\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, env=env,
                          capture_output=True, text=True, check=False, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "torch==2.15.0" in done.stdout.split()
    assert "nvidia-cudnn-cu13==9.26.0.51" in done.stdout.split()  # the closure, not one wheel
