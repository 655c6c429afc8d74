"""The generated GitLab pipeline run for real: gitlab-ci-local (its shell executor, the jobs'
scripts as written) on a copy of this checkout, against the local engine and registry, the
release's signing key as a File variable. What only GitLab has is left out and said so: the
two gate jobs (the test suite itself, `make test-extended`) echo a line instead, the GPU jobs
run with `NGC_GPU=none` where the machine has no GPU (their checks say `skipped: no GPU`), and
their after-script keeps the shared engine's images.

CI runs the first two image jobs by name (parents found by content key in the registry); the
whole pipeline, one job at a time, is in `make test-extended`: every job passes in `needs:`
order, and a release with a broken image stops that image's job and everything after it."""

from __future__ import annotations

import os
import re
import secrets
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from ngc_builder.publish.cosign_keys import KEY_FILE, write_key_pair
from tests.conftest import DATA, REPO
from tests.integration.conftest import REGISTRY_HOST, copy_lock

pytestmark = [pytest.mark.integration, pytest.mark.usefixtures("ci_packages")]
TOOL = REPO / "ci" / "gitlab-ci-local" / "node_modules" / ".bin" / "gitlab-ci-local"
RESULT = re.compile(r"^ (PASS|FAIL|WARN) +\[[^]]*\] (\S+)", re.MULTILINE)
STARTED = re.compile(r"^\[[^]]*\] (\S+) +starting shell", re.MULTILINE)
PASSWORD = "pipeline-test"
# The local trial's stand-ins for what only GitLab has (the module docstring says why).
LOCAL = """include: .gitlab/ci/monthly-release.gitlab-ci.yml
ngc:checks:
  script: ['echo "gitlab-ci-local: the test suite is the run calling this one"']
ngc:extended:
  script: ['echo "gitlab-ci-local: make test-extended is not run from inside itself"']
"""


def _copy_checkout(target: Path) -> None:
    """The checkout's files as they are now (tracked ones), its venv linked in: the jobs run
    `make setup` (up to date: the copy's inputs are dated before the venv) and .venv/bin."""
    listed = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z"], capture_output=True,
                            check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source, copy = REPO / name, target / name
        copy.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            copy.symlink_to(os.readlink(source))
        elif source.is_file():
            shutil.copy2(source, copy)
    (target / ".venv").symlink_to(REPO / ".venv")
    built = (REPO / ".venv" / "bin" / "ngc-builder").stat().st_mtime - 60
    for name in ("pyproject.toml", "requirements/builder.txt"):
        os.utime(target / name, (built, built))


def _project(root: Path, frameworks: tuple[str, ...]) -> Path:
    """A copy of the checkout holding the CI release with `frameworks`, its pipeline generated
    there and committed (gitlab-ci-local reads git)."""
    _copy_checkout(root)
    release = yaml.safe_load((DATA / "releases" / "ci.yaml").read_text())
    release["images"] = [row for row in release["images"] if row["framework"] in frameworks]
    manifest = root / "releases" / "ci.yaml"
    manifest.write_text(yaml.safe_dump(release, sort_keys=False))
    copy_lock(manifest, leave_out=tuple({"jax", "broken"} - set(frameworks)))
    if "broken" in frameworks:
        shutil.copytree(DATA / "frameworks" / "broken", root / "frameworks" / "broken")
    subprocess.run([str(REPO / ".venv" / "bin" / "ngc-builder"), "ci", "releases/ci.yaml"],
                   cwd=root, check=True, capture_output=True)
    (root / ".gitlab-ci-local.yml").write_text(LOCAL + _gpu_jobs_here(root))
    git = ["git", "-c", "user.name=test", "-c", "user.email=test@example.com"]
    for step in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "release"],
                 ["remote", "add", "origin", "git@gitlab.example.com:team/ngc-builder.git"]):
        subprocess.run([*git, *step], cwd=root, check=True, capture_output=True)
    return root


def _gpu_jobs_here(root: Path) -> str:
    """The GPU jobs as this machine can run them: without a GPU, NGC_GPU=none (said by every
    GPU check), and an after-script that leaves the shared engine's images alone."""
    pipeline = yaml.safe_load((root / ".gitlab/ci/monthly-release.gitlab-ci.yml").read_text())
    gpu = os.path.exists("/dev/nvidiactl")
    lines = []
    for name in sorted(job for job in pipeline if job.startswith("ngc:gpu-")):
        lines += [f"{name}:", "  after_script: ['rm -rf \"$DOCKER_CONFIG\"']"]
        lines += [] if gpu else ["  variables:", "    NGC_GPU: none"]
    return "\n".join(lines) + "\n"


def _variables(root: Path, registry: str) -> str:
    """The project's CI/CD variables as the site's GitLab holds them (docs/ci.md), written in
    the checkout: gitlab-ci-local reads a variables file relative to it."""
    write_key_pair(root / ".keys", PASSWORD.encode())
    variables = {
        "NGC_REGISTRY": registry, "NGC_REGISTRY_USER": "pipeline",
        "NGC_REGISTRY_TOKEN": "anonymous-registry", "NGC_SIGNING_PASSWORD": PASSWORD,
        "NGC_SIGNING_KEY": {"type": "file",
                            "values": {"*": (root / ".keys" / KEY_FILE).read_text()}},
        "CI_PIPELINE_SOURCE": "web"}  # the generated rules run on schedules and by hand
    (root / ".variables.yml").write_text(yaml.safe_dump(variables))
    return ".variables.yml"


def _run(root: Path, *jobs: str, timeout: float = 1500) -> str:
    if not TOOL.exists():
        pytest.skip("gitlab-ci-local is not installed: bash ci/setup-gitlab-ci-local.sh")
    registry = f"{REGISTRY_HOST}/glci-{secrets.token_hex(4)}"
    done = subprocess.run(
        [str(TOOL), "--file", ".gitlab-ci-local.yml", "--variables-file",
         _variables(root, registry), "--ignore-predefined-vars", "CI_PIPELINE_SOURCE",
         "--concurrency", "1", "--timestamps", *jobs], cwd=root, capture_output=True, text=True,
        timeout=timeout, check=False, env={**os.environ, "FORCE_COLOR": "0"})
    return re.sub(r"\x1b\[[0-9;]*m", "", done.stdout + done.stderr)


def _results(output: str) -> dict[str, str]:
    return {job: result for result, job in RESULT.findall(output)}


def test_the_first_image_jobs_run_as_written_and_find_their_parent_by_key(
        tmp_path: Path) -> None:
    root = _project(tmp_path / "project", ("jax",))
    output = _run(root, "ngc:base", "ngc:cuda-mini")
    assert _results(output) == {"ngc:base": "PASS", "ngc:cuda-mini": "PASS"}, output[-3000:]
    assert "ngc:cuda-mini > " in output
    # the CUDA stack's job met base in the registry by its key, as another runner would
    assert re.search(r"ngc:cuda-mini > .*base: unchanged: registry holds", output), output[-3000:]


@pytest.mark.extended
@pytest.mark.timeout(2400)
def test_the_whole_pipeline_passes_in_needs_order(tmp_path: Path) -> None:
    root = _project(tmp_path / "project", ("jax",))
    output = _run(root)
    results = _results(output)
    assert results and set(results.values()) == {"PASS"}, output[-4000:]
    started = STARTED.findall(output)
    pipeline = yaml.safe_load((root / ".gitlab/ci/monthly-release.gitlab-ci.yml").read_text())
    for job, body in pipeline.items():
        for need in body.get("needs", []) if isinstance(body, dict) else []:
            parent = need["job"] if isinstance(need, dict) else need
            assert started.index(parent) < started.index(job), (parent, job)
    assert "ngc:publish" in results


@pytest.mark.extended
@pytest.mark.timeout(2400)
def test_a_broken_image_stops_its_job_and_everything_after_it(tmp_path: Path) -> None:
    root = _project(tmp_path / "project", ("jax", "broken"))
    results = _results(_run(root))
    assert results["ngc:broken"] == "FAIL"
    assert results["ngc:jax"] == "PASS"  # its sibling goes on
    # gitlab-ci-local starts no job whose needs failed (GitLab shows them skipped)
    assert "ngc:gpu-broken" not in results and "ngc:publish" not in results
