"""The generated pipelines pass the services' published JSON schemas (the copies
check-jsonschema ships, so no download) and actionlint with zero findings, shellcheck reading
every `run:` script. The first two come with the dev extra, shellcheck with ci/setup-host.sh:
without it actionlint leaves the scripts unread, so its absence is a skip (a failure in CI),
never a pass."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ngc_builder.manifest.load import load_release
from ngc_builder.manifest.site import CiSite, load_site
from ngc_builder.plan.ci_jobs import (
    ACTIONLINT_FILE,
    BUMP_FILE,
    GITHUB_FILE,
    GITLAB_FILE,
    pipelines,
)
from ngc_builder.plan.dag import plan_release
from tests.conftest import REPO

pytestmark = pytest.mark.unit
MANIFEST = "releases/26.11.yaml"
OTHER_SITE = CiSite(runner_labels=["self-hosted", "linux", "builder"],
                    gpu_runner_labels=["self-hosted", "linux", "h100"],
                    gitlab_tags=["ngc-build"], gitlab_gpu_tags=["ngc-gpu"],
                    registry_variable="RELEASE_REGISTRY", username_secret="RELEASE_BOT",
                    password_secret="RELEASE_BOT_TOKEN")
SITES = {"this project's site": load_site(None, REPO).ci, "another site": OTHER_SITE}


@pytest.fixture(params=list(SITES))
def written(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """The 26.11 pipelines for one site, written under a folder of their own."""
    plan = plan_release(load_release(REPO / MANIFEST))
    for pipeline in pipelines(plan, MANIFEST, SITES[request.param]):
        (tmp_path / pipeline.path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / pipeline.path).write_text(pipeline.text, encoding="utf-8")
    return tmp_path


def run(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=120,
                          check=False)


def tool(name: str) -> str:
    """The tool beside this interpreter (the venv's), else on PATH."""
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is missing: pip install -e '.[dev]'")
    return found


@pytest.mark.parametrize(("schema", "path"), [("vendor.github-workflows", GITHUB_FILE),
                                              ("vendor.github-workflows", BUMP_FILE),
                                              ("vendor.gitlab-ci", GITLAB_FILE)])
def test_the_services_schemas_accept_the_pipelines(written: Path, schema: str,
                                                   path: Path) -> None:
    result = run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema,
                  str(written / path)], written)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_gitlab_include_line_is_a_valid_pipeline() -> None:
    result = run([sys.executable, "-m", "check_jsonschema", "--builtin-schema",
                  "vendor.gitlab-ci", ".gitlab-ci.yml"], REPO)
    assert result.returncode == 0, result.stdout + result.stderr


def test_actionlint_finds_nothing(written: Path) -> None:
    shellcheck_present()
    result = run([tool("actionlint"), "-no-color", "-config-file", str(ACTIONLINT_FILE),
                  str(GITHUB_FILE), str(BUMP_FILE)], written)
    assert (result.returncode, result.stdout + result.stderr) == (0, "")


def shellcheck_present() -> None:
    if shutil.which("shellcheck") is None:
        pytest.skip("shellcheck not installed: actionlint would leave every run: script "
                    "unread (ci/setup-host.sh installs it)")


def test_actionlint_reads_the_run_scripts_with_shellcheck(tmp_path: Path) -> None:
    """What the test above relies on: a script shellcheck objects to is a finding."""
    shellcheck_present()
    workflow = tmp_path / ".github" / "workflows" / "x.yml"
    workflow.parent.mkdir(parents=True)
    workflow.write_text("on: push\njobs:\n  x:\n    runs-on: ubuntu-latest\n    steps:\n"
                        "      - run: cd $HOME/a b; rm -rf $folder/\n")
    result = run([tool("actionlint"), "-no-color", str(workflow)], tmp_path)
    assert result.returncode == 1 and "shellcheck reported issue" in result.stdout, \
        result.stdout + result.stderr
