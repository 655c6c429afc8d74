"""The CI release's images as researchers start them: plain `docker run`, an arbitrary UID on
a read-only root, `docker stop`, the NVIDIA runtime's NVIDIA_REQUIRE_CUDA."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import wait_until
from tests.integration.conftest import ReleaseRun

pytestmark = pytest.mark.integration
TAG = "26.11-py3"
ODD_USER = ["--user", "4242:4242", "--read-only", "--tmpfs", "/tmp:rw,exec,nosuid,nodev"]


def ref_of(ci_release: ReleaseRun, image: str) -> str:
    return f"{ci_release.registry}/{image}:{TAG}"


def docker(*args: str, timeout: int = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["docker", *args], capture_output=True, text=True, check=False,
                          timeout=timeout)


def test_cuda_images_tell_the_nvidia_runtime_which_driver_they_need(
    ci_release: ReleaseRun, docker_client: Any,
) -> None:
    for image in ("cuda-mini", "jax"):
        docker("pull", ref_of(ci_release, image))
        config = docker_client.api.inspect_image(ref_of(ci_release, image))["Config"]
        env = dict(line.split("=", 1) for line in config["Env"])
        assert env["NVIDIA_REQUIRE_CUDA"] == "cuda>=13.2 driver>=580", image
        assert config["Labels"]["org.ngc-builder.min-driver"] == "580"
        assert config["WorkingDir"] == "/workspace"


def test_the_banner_goes_to_stderr_and_the_command_keeps_stdout_and_status(
    ci_release: ReleaseRun,
) -> None:
    done = docker("run", "--rm", ref_of(ci_release, "jax"), "python", "-c",
                  "import sys, jax; print(jax.__version__); sys.exit(3)")
    assert done.returncode == 3
    assert done.stdout == "0.12.0\n"
    assert done.stderr.startswith("== JAX ==\nngc-builder release 26.11, JAX 0.12.0, Python 3.13\n")
    assert "CUDA 13.2 (CUDA runtime 13.2.86)" in done.stderr
    assert "WARNING: no NVIDIA driver found" in done.stderr  # this machine has none
    assert "NOTE: /dev/shm is 64 MB" in done.stderr  # Docker's default, no --shm-size
    quiet = docker("run", "--rm", "--shm-size", "2g", "-e", "NGC_BANNER=off",
                   ref_of(ci_release, "jax"), "true")
    assert quiet.returncode == 0 and quiet.stderr == ""


READY = "ngc-test-ready"


def stopped(ref: str, setup: str = "") -> tuple[int, float]:
    """Run `setup` in the image, then say READY and sleep; `docker stop` it once READY is out:
    its exit code and how long stop took. READY comes after `setup` (a signal handler it
    installs is in place before the stop can arrive)."""
    program = f"import time\n{setup}\nprint('{READY}', flush=True)\ntime.sleep(300)"
    started = docker("run", "-d", ref, "python", "-c", program)
    container = started.stdout.strip()
    try:
        wait_until(lambda: READY in docker("logs", container).stdout, 60,
                   "the program started, past the banner")
        begun = time.monotonic()
        docker("stop", "-t", "20", container)
        took = time.monotonic() - begun
        state = json.loads(docker("inspect", container).stdout)[0]["State"]
        return int(state["ExitCode"]), took
    finally:
        docker("rm", "-f", container)


def test_docker_stop_reaches_the_command_and_its_status_comes_back(
    ci_release: ReleaseRun,
) -> None:
    ref = ref_of(ci_release, "jax")
    # No handler: SIGTERM ends it (128 + 15) at once, not after the 20 s stop timeout (a
    # command that were PID 1 itself would ignore SIGTERM and be killed: 137).
    code, took = stopped(ref)
    assert code == 143 and took < 10
    code, took = stopped(ref, "import signal, sys\n"
                              "signal.signal(signal.SIGTERM, lambda *_: sys.exit(42))")
    assert code == 42 and took < 10


def test_an_arbitrary_uid_on_a_read_only_root_gets_a_home_and_runs_the_framework(
    ci_release: ReleaseRun,
) -> None:
    program = ("import os, pathlib, getpass, jax.numpy as jnp\n"
               "home = pathlib.Path.home(); (home / 'cache.txt').write_text('ok')\n"
               "print(os.getuid(), home, getpass.getuser(), os.getcwd(), float(jnp.ones(3).sum()))")
    done = docker("run", "--rm", *ODD_USER, ref_of(ci_release, "jax"), "python", "-c", program)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["4242", "/tmp/home-4242", "uid4242", "/workspace", "3.0"]
    # A shell started by the entrypoint inherits the HOME it settled.
    shell = docker("run", "--rm", *ODD_USER, ref_of(ci_release, "jax"), "sh", "-c",
                   'touch "$HOME/x" && echo "$HOME"')
    assert shell.returncode == 0 and shell.stdout == "/tmp/home-4242\n", shell.stderr
    # Writing anywhere else on the root fails, as the read-only root must.
    root = docker("run", "--rm", *ODD_USER, ref_of(ci_release, "jax"), "touch", "/opt/x")
    assert root.returncode != 0 and "Read-only file system" in root.stderr


def test_validation_ran_as_an_arbitrary_uid_on_a_read_only_root(ci_release: ReleaseRun) -> None:
    validation = ci_release.record["images"]["jax"]["validation"]
    report = json.loads(Path(validation["report"]).read_text())
    checks = {c["id"]: c for c in report["checks"]}
    for passed in ("image.entrypoint", "image.user", "image.workdir", "cuda.require"):
        assert checks[passed]["status"] == "pass", checks[passed]
    assert checks["image.user"]["evidence"]["uid_gid"] == "54321:54321"
    assert checks["image.user"]["evidence"]["root_read_only"] is True
    assert "--user 54321:54321 --read-only" in report["environment"]["docker_command"]


def test_versions_are_in_the_environment_and_the_workspace_readme_says_how_to_run(
    ci_release: ReleaseRun, docker_client: Any,
) -> None:
    ref = ref_of(ci_release, "jax")
    docker("pull", ref)
    env = dict(line.split("=", 1) for line in docker_client.api.inspect_image(ref)["Config"]["Env"])
    assert (env["JAX_VERSION"], env["NVIDIA_PRODUCT_NAME"], env["NGC_RELEASE"]) == (
        "0.12.0", "JAX", "26.11")
    assert (env["CUDA_VERSION"], env["CUDART_VERSION"]) == ("13.2", "13.2.86")
    readme = docker("run", "--rm", "-e", "NGC_BANNER=off", ref, "cat", "/workspace/README.md")
    assert readme.stdout.startswith("# JAX 0.12.0 (ngc-builder release 26.11)\n")
    assert "## Charliecloud" in readme.stdout and "ch-run --set-env" in readme.stdout


def test_site_hooks_run_in_order_and_a_failing_one_stops_the_start_named(
    ci_release: ReleaseRun, tmp_path: Path,
) -> None:
    hooks = tmp_path / "entrypoint.d"
    hooks.mkdir()
    (hooks / "10-site.txt").write_text("Welcome to the site cluster\n")
    (hooks / "20-fabric.sh").write_text("export NCCL_IB_HCA=mlx5\nunset NGC_RELEASE\n")
    (hooks / "30-after.sh").write_text('export SITE_ORDER="$NCCL_IB_HCA-then-30"\n')
    mount = ["-v", f"{hooks}:/opt/ngc/entrypoint.d:ro"]
    ref = ref_of(ci_release, "jax")
    program = "import os; print(os.environ['SITE_ORDER'], 'NGC_RELEASE' in os.environ)"
    done = docker("run", "--rm", *mount, *ODD_USER, ref, "python", "-c", program)
    assert (done.returncode, done.stdout) == (0, "mlx5-then-30 False\n"), done.stderr
    assert "Welcome to the site cluster" in done.stderr
    (hooks / "25-broken.sh").write_text("echo mounting scratch >&2\nfalse\n")
    failed = docker("run", "--rm", *mount, ref, "touch", "/tmp/ran")
    assert failed.returncode == 1
    assert ("ngc entrypoint: hook /opt/ngc/entrypoint.d/25-broken.sh failed (exit 1); "
            "touch was not started") in failed.stderr
