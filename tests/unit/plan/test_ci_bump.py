"""The monthly bump as CI jobs: a pull / merge request with the proposal, before any build."""

from __future__ import annotations

import pytest
import yaml

from ngc_builder.manifest.load import load_release
from ngc_builder.manifest.site import load_site
from ngc_builder.plan.ci_bump import next_release
from ngc_builder.plan.ci_jobs import BUMP_FILE, GITLAB_FILE, pipelines
from ngc_builder.plan.dag import plan_release
from tests.conftest import REPO

pytestmark = pytest.mark.unit
MANIFEST = "releases/26.11.yaml"


def generated() -> dict[object, object]:
    plan = plan_release(load_release(REPO / MANIFEST))
    return {p.path: yaml.safe_load(p.text)
            for p in pipelines(plan, MANIFEST, load_site(None, REPO).ci)}


@pytest.mark.parametrize(("release", "after"), [("26.11", "26.12"), ("26.12", "27.01"),
                                                ("27.01", "27.02")])
def test_the_next_release_id(release: str, after: str) -> None:
    assert next_release(release) == after


def test_github_opens_a_pull_request_with_the_proposal_on_the_20th() -> None:
    workflow = generated()[BUMP_FILE]
    assert isinstance(workflow, dict)
    assert workflow["on"] == {"schedule": [{"cron": "0 3 20 * *"}], "workflow_dispatch": {}}
    assert workflow["permissions"] == {"contents": "write", "pull-requests": "write"}
    steps = workflow["jobs"]["bump"]["steps"]
    script = "\n".join(step.get("run", "") for step in steps)
    assert ".venv/bin/ngc-builder bump releases/26.11.yaml --to 26.12 --report bump-26.12.md" \
        in script
    assert "git add releases/26.12.yaml releases/26.12.lock.json" in script
    assert "gh pr create --head bump/26.12" in script and "--body-file bump-26.12.md" in script
    assert "${{" not in script  # expressions only in env:, never pasted into a script


def test_gitlab_bumps_on_its_own_schedule_and_the_release_skips_it() -> None:
    jobs = generated()[GITLAB_FILE]
    assert isinstance(jobs, dict)
    bump = jobs["ngc:bump"]
    assert bump["rules"] == [{"if": '$CI_PIPELINE_SOURCE == "schedule" && $NGC_BUMP == "1"'}]
    push = bump["script"][-1]
    assert "-o merge_request.create" in push and "$(cat bump-26.12.md)" in push
    assert "@$CI_SERVER_HOST" not in push  # the token never in a URL
    for name, job in jobs.items():
        if name != "ngc:bump":
            assert all('$NGC_BUMP != "1"' in rule["if"] for rule in job["rules"]
                       if '"schedule"' in rule["if"]), name
