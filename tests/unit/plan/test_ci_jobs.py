"""The CI pipelines in ci/ are generated from the release manifest and kept in step with it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ngc_builder.manifest.load import load_release
from ngc_builder.plan.ci_jobs import GITHUB_FILE, GITLAB_FILE, pipelines, stale
from ngc_builder.plan.dag import plan_release
from tests.conftest import REPO, WriteRelease
from tests.unit.conftest import GOOD_RELEASE

pytestmark = pytest.mark.unit
MANIFEST = "releases/26.11.yaml"


def test_the_committed_pipelines_match_the_release_manifest() -> None:
    plan = plan_release(load_release(REPO / MANIFEST))
    assert stale(REPO / "ci", pipelines(plan, MANIFEST)) == []


def test_one_job_per_image_needing_its_parent(write_release: WriteRelease) -> None:
    plan = plan_release(load_release(write_release(GOOD_RELEASE)))
    made = {p.path: yaml.safe_load(p.text) for p in pipelines(plan, MANIFEST)}
    github = made[GITHUB_FILE]["jobs"]
    gitlab = made[GITLAB_FILE]
    for spec in plan.images:
        parent = [spec.parent or "checks"]
        assert github[spec.name]["needs"] == parent and gitlab[spec.name]["needs"] == parent
        assert f"--only {spec.name} " in github[spec.name]["steps"][-1]["run"]
        assert f"--only {spec.name} " in gitlab[spec.name]["script"][-1]
    assert github["publish-record"]["needs"] == [spec.name for spec in plan.images]
    assert made[GITHUB_FILE]["on"]["schedule"] == [{"cron": "0 3 1 * *"}]


def test_a_new_image_makes_the_committed_files_stale(write_release: WriteRelease,
                                                     tmp_path: Path) -> None:
    plan = plan_release(load_release(write_release(GOOD_RELEASE)))
    for pipeline in pipelines(plan, MANIFEST):
        (tmp_path / pipeline.path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / pipeline.path).write_text(pipeline.text)
    assert stale(tmp_path, pipelines(plan, MANIFEST)) == []
    fewer = plan.__class__(plan.release, plan.registry, plan.os_refs, plan.images[:-1])
    assert len(stale(tmp_path, pipelines(fewer, MANIFEST))) == 2
