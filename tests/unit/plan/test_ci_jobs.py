"""The CI pipelines are generated from the release manifest into the files the services read,
kept in step with it, and follow the rules of docs/ci.md: no expression or secret in a script,
least privilege, GPU jobs on GPU runners, one last job after every other."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from ngc_builder.commands.ci import CiOptions, ci_command
from ngc_builder.commands.guard import guarded
from ngc_builder.manifest.load import load_release
from ngc_builder.manifest.site import CiSite, load_site
from ngc_builder.plan.ci_common import validated_on_gpu
from ngc_builder.plan.ci_jobs import ACTIONLINT_FILE, GITHUB_FILE, GITLAB_FILE, pipelines, stale
from ngc_builder.plan.dag import ReleasePlan, plan_release
from tests.conftest import REPO, WriteRelease
from tests.unit.conftest import GOOD_RELEASE

pytestmark = pytest.mark.unit
MANIFEST = "releases/26.11.yaml"
GATES = ("checks", "extended")  # what the first images wait for
GITLAB_GATES = tuple(f"ngc:{gate}" for gate in GATES)
SITE = CiSite(runner_labels=["self-hosted", "linux", "builder"],
              gpu_runner_labels=["self-hosted", "linux", "h100"],
              gitlab_tags=["ngc-build"], gitlab_gpu_tags=["ngc-gpu"],
              registry_variable="RELEASE_REGISTRY", username_secret="RELEASE_BOT",
              password_secret="RELEASE_BOT_TOKEN")


def the_release() -> ReleasePlan:
    """26.11: CUDA stacks, CPU-only rows and expected failures."""
    return plan_release(load_release(REPO / MANIFEST))


def generated(plan: ReleasePlan, site: CiSite = SITE) -> dict[Path, Any]:
    return {p.path: yaml.safe_load(p.text) for p in pipelines(plan, MANIFEST, site)}


def github_jobs(plan: ReleasePlan) -> dict[str, Any]:
    jobs: dict[str, Any] = generated(plan)[GITHUB_FILE]["jobs"]
    return jobs


def gitlab_jobs(plan: ReleasePlan) -> dict[str, Any]:
    """The release's jobs (the bump job has tests of its own: test_ci_bump.py)."""
    jobs: dict[str, Any] = {name: job for name, job in generated(plan)[GITLAB_FILE].items()
                            if name != "ngc:bump"}
    return jobs


def steps(jobs: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for name, job in jobs.items():
        for step in job["steps"]:
            yield name, step


def test_the_committed_pipelines_match_the_release_manifest() -> None:
    site = load_site(None, REPO).ci
    assert stale(REPO, pipelines(the_release(), MANIFEST, site)) == []


def test_the_files_go_where_the_services_read_them() -> None:
    assert GITHUB_FILE.as_posix() == ".github/workflows/monthly-release.yml"
    assert ACTIONLINT_FILE.as_posix() == ".github/actionlint.yaml"
    include = yaml.safe_load((REPO / ".gitlab-ci.yml").read_text(encoding="utf-8"))
    assert include["include"] == GITLAB_FILE.as_posix()


def test_one_job_per_image_needing_its_parent() -> None:
    plan = the_release()
    github, gitlab = github_jobs(plan), gitlab_jobs(plan)
    for spec in plan.images:
        needs = [spec.parent] if spec.parent else list(GATES)
        assert github[spec.name]["needs"] == needs
        assert gitlab[f"ngc:{spec.name}"]["needs"] == [{"job": f"ngc:{need}",
                                                        "artifacts": False} for need in needs]
        assert f"--only {spec.name} " in github[spec.name]["steps"][3]["run"]
        assert f"--only {spec.name} " in gitlab[f"ngc:{spec.name}"]["script"][-1]


def test_no_expression_in_a_script_and_secrets_only_where_they_are_used() -> None:
    """The registry's secrets reach only the login step; the signing key's only the steps
    that promote (and so sign) or verify, each through the step's env."""
    signing = {"NGC_SIGNING_KEY": "env://NGC_SIGNING_KEY_PEM",
               "NGC_SIGNING_KEY_PEM": "${{ secrets.NGC_SIGNING_KEY }}",
               "NGC_SIGNING_PASSWORD": "${{ secrets.NGC_SIGNING_PASSWORD }}"}
    signed = 0
    for job, step in steps(github_jobs(the_release())):
        assert "${{" not in step.get("run", ""), job
        secrets = {k: v for k, v in step.get("env", {}).items() if "secrets." in v}
        if "docker login" in step.get("run", ""):
            assert secrets == {"RELEASE_BOT": "${{ secrets.RELEASE_BOT }}",
                               "RELEASE_BOT_TOKEN": "${{ secrets.RELEASE_BOT_TOKEN }}"}
            assert ('"$RELEASE_BOT_TOKEN" | docker login --username "$RELEASE_BOT" '
                    '--password-stdin "${RELEASE_REGISTRY%%/*}"') in step["run"]
        elif secrets:
            assert step["env"] == signing and "ngc-builder release" in step["run"], job
            signed += 1
    assert signed > 0


def test_every_registry_job_logs_in_before_it_touches_the_registry() -> None:
    plan = the_release()
    for name, job in github_jobs(plan).items():
        if name not in (*GATES, "test-report"):
            assert [s.get("name") for s in job["steps"]][2] == "Log in to the registry"
    for name, job in gitlab_jobs(plan).items():
        if name not in GITLAB_GATES:
            assert "--password-stdin" in job["script"][1], name
            assert job["variables"]["DOCKER_CONFIG"].startswith("$CI_PROJECT_DIR/")


def test_least_privilege_permissions() -> None:
    workflow = generated(the_release())[GITHUB_FILE]
    assert workflow["permissions"] == {"contents": "read"}
    granted = {name: job["permissions"] for name, job in workflow["jobs"].items()
               if "permissions" in job}
    assert granted == {"test-report": {"contents": "read", "checks": "write"}}


def test_gpu_jobs_for_cuda_images_on_gpu_runners() -> None:
    plan = the_release()
    github, gitlab = github_jobs(plan), gitlab_jobs(plan)
    wanted = [spec.name for spec in plan.images if validated_on_gpu(spec)]
    assert wanted == ["cuda-cu11", "cuda-cu12", "cuda-cu13", "pytorch", "jax", "tensorflow"]
    assert sorted(n[4:] for n in github if n.startswith("gpu-")) == sorted(wanted)
    for name in wanted:
        job, lab = github[f"gpu-{name}"], gitlab[f"ngc:gpu-{name}"]
        parent = plan.get(name).parent
        # After the image's own job, and after its parent was promoted by its GPU job.
        needs = [name, *([f"gpu-{parent}"] if parent in wanted else [])]
        assert (job["needs"], job["runs-on"]) == (needs, SITE.gpu_runner_labels)
        assert [need["job"] for need in lab["needs"]] == [f"ngc:{n}" for n in needs]
        assert lab["tags"] == ["ngc-gpu"]
        assert job["env"]["NGC_GPU"] == lab["variables"]["NGC_GPU"] == "required"
        # The staged candidate pulled, validated with GPUs and promoted by this job.
        release = f'release {MANIFEST} --only {name} --registry "$RELEASE_REGISTRY" --quiet'
        assert release in job["steps"][3]["run"] and release in lab["script"][-1]
        # Its own job only staged it; a CPU-only image's job promotes it.
        assert "--no-promote" in github[name]["steps"][3]["run"]
    assert "--no-promote" not in github["base"]["steps"][3]["run"]
    assert github["pytorch"]["needs"] == ["cuda-cu13"]


def test_build_jobs_on_build_runners_without_a_local_registry() -> None:
    plan = the_release()
    github, gitlab = github_jobs(plan), gitlab_jobs(plan)
    for spec in plan.images:
        job = github[spec.name]
        assert (job["runs-on"], job["env"]["NGC_GPU"]) == (SITE.runner_labels, "none")
        assert gitlab[f"ngc:{spec.name}"]["tags"] == ["ngc-build"]
    for name, job in github.items():
        runs = [step.get("run", "") for step in job["steps"]]
        assert name in (*GATES, "test-report") or runs[1] == "make setup"
        assert not any("engine" in run for run in runs)
    for name, job in gitlab.items():
        assert name in GITLAB_GATES or job["script"][0] == "make setup"
        assert not any("engine" in line for line in job["script"])


def test_the_last_job_needs_every_image_and_gpu_job() -> None:
    plan = the_release()
    github, gitlab = github_jobs(plan), gitlab_jobs(plan)
    others = [name for name in github if name not in (*GATES, "publish", "test-report")]
    assert len(others) == len(plan.images) + 6
    assert github["publish"]["needs"] == github["test-report"]["needs"] == others
    assert [need["job"] for need in gitlab["ngc:publish"]["needs"]] == \
        [f"ngc:{name}" for name in others]
    assert list(gitlab)[-1] == "ngc:publish"
    script = "\n".join(gitlab["ngc:publish"]["script"])
    assert all(f" {command} {MANIFEST}" in script for command in ("verify", "report"))


def test_artifacts_kept_whatever_the_outcome() -> None:
    plan = the_release()
    uploads = [step for _, step in steps(github_jobs(plan))
               if step.get("uses", "").startswith("actions/upload-artifact@")]
    assert len(uploads) == len(plan.images) + 6 + 1
    assert all(step["if"] == "always()" for step in uploads)
    assert "build/26.11/release.json" in uploads[-1]["with"]["path"]
    for name, job in gitlab_jobs(plan).items():
        if name not in GITLAB_GATES:
            assert job["artifacts"]["when"] == "always"
            assert job["artifacts"]["reports"]["junit"] == "build/26.11/reports/*.junit.xml"


def test_merge_requests_and_pull_requests_run_only_the_checks() -> None:
    plan = the_release()
    for name, job in github_jobs(plan).items():
        assert name == "checks" or "github.event_name != 'pull_request'" in job["if"]
    for name, job in gitlab_jobs(plan).items():
        sources = " ".join(rule["if"] for rule in job["rules"])
        assert ("merge_request_event" in sources) == (name == "ngc:checks")
        assert '"schedule"' in sources and '"web"' in sources
        assert job["tags"]
    on = generated(plan)[GITHUB_FILE]["on"]
    assert on == {"schedule": [{"cron": "0 3 1 * *"}], "workflow_dispatch": {},
                  "pull_request": {}}


def test_readable_gitlab_file_without_anchors_stages_or_workflow() -> None:
    text = next(p.text for p in pipelines(the_release(), MANIFEST, SITE)
                if p.path == GITLAB_FILE)
    events = list(yaml.parse(text))
    assert not [e for e in events if getattr(e, "anchor", None) is not None]
    assert {"stages", "workflow", "default"}.isdisjoint(yaml.safe_load(text))


def test_actionlint_config_names_the_site_labels() -> None:
    config = generated(the_release())[ACTIONLINT_FILE]
    assert config["self-hosted-runner"]["labels"] == ["builder", "h100", "linux",
                                                      "self-hosted"]
    assert config["config-variables"] == ["RELEASE_REGISTRY"]


def test_a_new_image_makes_the_committed_files_stale(write_release: WriteRelease,
                                                     tmp_path: Path) -> None:
    plan = plan_release(load_release(write_release(GOOD_RELEASE)))
    for pipeline in pipelines(plan, MANIFEST, SITE):
        (tmp_path / pipeline.path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / pipeline.path).write_text(pipeline.text)
    assert stale(tmp_path, pipelines(plan, MANIFEST, SITE)) == []
    fewer = plan.__class__(plan.release, plan.registry, plan.os_refs, plan.images[:-1])
    assert stale(tmp_path, pipelines(fewer, MANIFEST, SITE)) == [
        str(tmp_path / GITHUB_FILE), str(tmp_path / GITLAB_FILE)]


def test_the_command_writes_into_the_project_root_and_checks(
        write_release: WriteRelease, capsys: pytest.CaptureFixture[str]) -> None:
    manifest = write_release(GOOD_RELEASE)
    root = manifest.parent.parent
    (root / "site.yaml").write_text("ci:\n  gitlab_tags: [ngc-build]\n", encoding="utf-8")
    assert ci_command(CiOptions(manifest)) == 0
    job = yaml.safe_load((root / GITLAB_FILE).read_text(encoding="utf-8"))["ngc:base"]
    assert job["tags"] == ["ngc-build"]
    assert "release releases/26.11.yaml --only base " in job["script"][-1]
    assert ci_command(CiOptions(manifest, check=True)) == 0
    (root / GITHUB_FILE).write_text("jobs: {}\n", encoding="utf-8")
    assert ci_command(CiOptions(manifest, check=True)) == 1
    assert f"{root / GITHUB_FILE}: stale" in capsys.readouterr().err


def test_gpu_jobs_remove_the_images_they_pulled_shared_layers_too(tmp_path: Path) -> None:
    """The cleanup step run by a real shell against a `docker` that lists images by label:
    this release's framework images and the shared layers (which name no release) go, another
    release's framework image stays."""
    held = {"org.ngc-builder.release=26.11": "f1", "org.ngc-builder.release=26.10": "old",
            "org.ngc-builder.image=cuda-cu13": "c13", "org.ngc-builder.image=base": "b"}
    cases = "\n".join(f'  "label={label}") echo {image} ;;' for label, image in held.items())
    docker = tmp_path / "docker"
    docker.write_text(f'#!/bin/sh\nif [ "$2" = ls ]; then case "$5" in\n{cases}\n  esac\n'
                      f'else echo "$@" >> {tmp_path}/removed; fi\n')
    docker.chmod(0o755)
    cleanup = next(step["run"] for _, step in steps(github_jobs(the_release()))
                   if step.get("name") == "Remove the pulled images")
    done = subprocess.run(["bash", "-c", cleanup], env={"PATH": f"{tmp_path}:/usr/bin:/bin"},
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    removed = (tmp_path / "removed").read_text().split()
    assert removed[:3] == ["image", "rm", "-f"] and sorted(removed[3:]) == ["b", "c13", "f1"]


def test_a_hostile_manifest_path_stays_one_word_in_every_script(
        write_release: WriteRelease, tmp_path: Path) -> None:
    """`ngc-builder ci 'rel-$(touch PWNED)/26.11.yaml'`: every line of every generated job that
    names the manifest, run by a real shell (the CLI swapped for printf), prints the path as
    it is, and nothing runs."""
    manifest = write_release(GOOD_RELEASE)
    root = manifest.parent.parent
    hostile = root / "rel-$(touch PWNED)" / "26.11.yaml"
    hostile.parent.mkdir()
    for path in manifest.parent.iterdir():
        (hostile.parent / path.name).write_bytes(path.read_bytes())
    assert ci_command(CiOptions(hostile, root=root)) == 0
    lines = [line for path in (GITHUB_FILE, GITLAB_FILE, Path(".github/workflows/"
                                                               "monthly-bump.yml"))
             for line in (root / path).read_text().splitlines() if "PWNED" in line
             and not line.startswith("#")]
    assert len(lines) > 10
    for line in lines:
        script = line.split(": ", 1)[-1].lstrip("- ").replace(".venv/bin/ngc-builder",
                                                              "printf '%s\\n'")
        script = script.replace("git ", "printf '%s\\n' ", 1) if "git " in script else script
        done = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True,
                              text=True, check=False)
        assert "rel-$(touch PWNED)/26.1" in done.stdout, (script, done.stderr)
    assert not (tmp_path / "PWNED").exists()


@pytest.mark.parametrize("folder", ["rel\non: push", "rel-${{ secrets.NGC_REGISTRY_TOKEN }}"])
def test_a_path_that_would_become_yaml_or_an_expression_is_refused(
        write_release: WriteRelease, capsys: pytest.CaptureFixture[str], folder: str) -> None:
    manifest = write_release(GOOD_RELEASE)
    root = manifest.parent.parent
    hostile = root / folder / "26.11.yaml"
    hostile.parent.mkdir()
    for path in manifest.parent.iterdir():
        (hostile.parent / path.name).write_bytes(path.read_bytes())
    assert guarded(lambda: ci_command(CiOptions(hostile, root=root))) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.endswith("(path): a control character or `${{` in the path: it cannot go "
                         "into a pipeline")
    assert not (root / GITHUB_FILE).exists() and not (root / ".gitlab").exists()


def test_gitlab_jobs_map_the_signing_key_only_when_the_site_renames_it() -> None:
    plan = the_release()
    for name, job in gitlab_jobs(plan).items():
        assert "NGC_SIGNING_KEY" not in job.get("variables", {}), name  # the project's own
    renamed = SITE.model_copy(update={"signing_key_secret": "RELEASE_KEY"})
    jobs = generated(plan, renamed)[GITLAB_FILE]
    release_jobs = [job for name, job in jobs.items()
                    if name not in ("ngc:bump", *GITLAB_GATES)]
    assert release_jobs and all(job["variables"]["NGC_SIGNING_KEY"] == "$RELEASE_KEY"
                                for job in release_jobs)


def test_the_extended_suite_gates_every_scheduled_release() -> None:
    """`make test-extended` runs where something real runs it: in the scheduled and
    hand-started release pipelines, after the checks and before the first image is built
    (never on a pull request: it is too long for one)."""
    plan = the_release()
    github, gitlab = github_jobs(plan), gitlab_jobs(plan)
    assert github["extended"]["needs"] == ["checks"]
    assert github["extended"]["if"] == "github.event_name != 'pull_request'"
    assert github["extended"]["steps"][-1]["run"] == "sudo --preserve-env make test-extended"
    assert gitlab["ngc:extended"]["script"] == ["make test-extended"]
    sources = " ".join(rule["if"] for rule in gitlab["ngc:extended"]["rules"])
    assert "merge_request_event" not in sources and '"schedule"' in sources
    roots = [spec.name for spec in plan.images if spec.parent is None]
    assert roots and all("extended" in github[name]["needs"] for name in roots)
    assert all({"job": "ngc:extended", "artifacts": False} in gitlab[f"ngc:{name}"]["needs"]
               for name in roots)


def test_gitlab_jobs_make_the_signing_key_file_their_own_before_the_builder_reads_it(
        tmp_path: Path) -> None:
    """GitLab writes a File variable readable by others; the builder refuses such a key. The
    line, run by a real shell, leaves the file 0600; without one the job stops (before, the
    builder signed with a key it made on the runner, which no user can verify with)."""
    for name, job in gitlab_jobs(the_release()).items():
        if name not in (*GITLAB_GATES, "ngc:bump"):
            script = job["script"]
            line = next(index for index, text in enumerate(script) if "chmod 600" in text)
            assert line < next(i for i, text in enumerate(script) if ".venv/bin/" in text)
    key = tmp_path / "key"
    key.write_text("k")
    key.chmod(0o666)
    chmod = next(text for text in gitlab_jobs(the_release())["ngc:base"]["script"]
                 if "chmod" in text)
    made = subprocess.run(["sh", "-c", chmod], env={"NGC_SIGNING_KEY": str(key)}, check=False)
    assert made.returncode == 0 and key.stat().st_mode & 0o777 == 0o600
    for env in ({"NGC_SIGNING_KEY": str(tmp_path / "absent")}, {"NGC_SIGNING_KEY": ""}, {}):
        done = subprocess.run(["sh", "-c", chmod], env=env, check=False, capture_output=True,
                              text=True)
        assert done.returncode == 1
        assert done.stderr == "ngc-builder: no NGC_SIGNING_KEY File variable: the release's " \
                              "cosign key (docs/ci.md)\n"
