"""The CLI: exit codes 0/1/2, one line per problem, never a traceback for bad input."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ngc_builder.cache.network import BuildNetwork
from ngc_builder.cli import main
from ngc_builder.commands.plan import PlanOptions, plan_command
from ngc_builder.pipeline.flow import run_inputs as release_inputs
from ngc_builder.pipeline.prepare import prepare
from ngc_builder.records.record import ImageRecord, ReleaseRecord, record_path
from ngc_builder.render.content_keys import content_keys
from tests.conftest import REPO, WriteRelease
from tests.unit.conftest import GOOD_RELEASE
from tests.unit.fake_engine import FakeClient, FakeEngine, TableRegistry

pytestmark = pytest.mark.unit


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_help_lists_the_commands() -> None:
    code, out, _ = invoke("--help")
    assert code == 0
    for command in ("check", "plan", "render", "release", "validate"):
        assert command in out


def test_check_bad_manifest_exits_2_with_one_line_per_problem(
    write_release: WriteRelease,
) -> None:
    text = GOOD_RELEASE.replace("base: debian-trixie", "base: debian-trixie\nbase_os: x").replace(
        'version: "2.15.0"', 'version: "2.15.0; reboot"')
    code, out, err = invoke("check", str(write_release(text)), "--offline")
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 2 and all(line.startswith("releases/26.11.yaml:") for line in lines)
    assert "Traceback" not in err


def test_check_missing_file_exits_2(tmp_path: Path) -> None:
    code, _, err = invoke("check", str(tmp_path / "releases" / "nope.yaml"), "--offline")
    assert code == 2 and "No such file or directory" in err and "Traceback" not in err


def test_check_good_manifest_offline(write_release: WriteRelease) -> None:
    code, out, _ = invoke("check", str(write_release(GOOD_RELEASE)), "--offline", "--json")
    assert code == 0
    assert json.loads(out)["images"] == ["base", "cuda-cu13", "pytorch", "jax"]


def test_plan_shows_ngc_tags(write_release: WriteRelease,
                             capsys: pytest.CaptureFixture[str]) -> None:
    options = PlanOptions(write_release(GOOD_RELEASE), as_json=True)
    registry = TableRegistry(address="registry.example:5000/ngc", down=True)
    assert plan_command(options, FakeClient(FakeEngine()), registry) == 0
    rows = json.loads(capsys.readouterr().out)["images"]
    pushes = [row["ref"] for row in rows]
    # That registry does not answer: every image would be built, and the plan says why.
    assert {row["build"] for row in rows} == {"build"}
    assert "registry unreachable" in rows[0]["reasons"][0]
    assert pushes == ["registry.example:5000/ngc/base:26.11-py3",
                      "registry.example:5000/ngc/cuda-cu13:26.11-py3",
                      "registry.example:5000/ngc/pytorch:26.11-py3",
                      "registry.example:5000/ngc/jax:26.11-py3"]


def test_plan_refuses_a_bad_registry_option(write_release: WriteRelease) -> None:
    manifest = str(write_release(GOOD_RELEASE))
    code, _, err = invoke("plan", manifest, "--registry", "registry.example:99999/ngc")
    assert code == 2
    assert err.strip() == ("--registry:1: registry: port 99999 of "
                           "'registry.example:99999/ngc' is out of range (1-65535)")


def test_render_writes_dockerfiles(write_release: WriteRelease, tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, _, _ = invoke("render", str(write_release(GOOD_RELEASE)), "--out", str(out),
                        "--offline")
    assert code == 0
    assert sorted(p.parent.name for p in out.glob("*/Dockerfile")) == [
        "base", "cuda-cu13", "jax", "pytorch"]


def test_release_rejects_a_bad_registry_option(write_release: WriteRelease) -> None:
    code, _, err = invoke("release", str(write_release(GOOD_RELEASE)), "--offline",
                          "--registry", "evil;rm -rf /")
    assert code == 2 and "--registry" in err and "Traceback" not in err


def test_a_platform_validated_elsewhere_is_never_promoted_by_the_run_that_deferred_it(
        write_release: WriteRelease) -> None:
    manifest = str(write_release(GOOD_RELEASE))
    code, _, err = invoke("release", manifest, "--defer-validation", "linux/arm64")
    assert code == 2 and "--defer-validation needs --no-promote" in err
    code, _, err = invoke("release", manifest, "--no-promote", "--defer-validation",
                          "linux/amd64")  # the host's platform is always validated here
    assert code == 2 and "'linux/amd64' is not" in err


def test_release_rejects_an_unknown_only(write_release: WriteRelease) -> None:
    code, _, err = invoke("release", str(write_release(GOOD_RELEASE)), "--offline",
                          "--only", "tensorflow")
    assert code == 2 and "no image named 'tensorflow'" in err


def test_release_without_a_lock_is_refused_before_anything_is_built(
        write_release: WriteRelease) -> None:
    code, _, err = invoke("release", str(write_release(GOOD_RELEASE, lock=False)), "--offline")
    assert code == 2
    assert err.strip().splitlines() == [
        "releases/26.11.lock.json:1: lock: no lock for release 26.11: run "
        "`ngc-builder lock MANIFEST`"]


def test_a_signing_key_that_cannot_be_read_stops_the_release_before_any_write(
        write_release: WriteRelease, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NGC_SIGNING_KEY", str(tmp_path / "absent.key"))
    build = tmp_path / "build"
    code, _, err = invoke("release", str(write_release(GOOD_RELEASE)), "--offline",
                          "--build-dir", str(build))
    assert code == 2
    assert err.strip().splitlines() == [f"{tmp_path / 'absent.key'}:1: key: No such file or "
                                        "directory"]
    assert not (build / "26.11" / "context").exists()  # no context rendered out


def test_a_control_character_in_a_path_stays_on_its_one_line(tmp_path: Path) -> None:
    """A file name holding a newline must not forge a second line of output."""
    code, _, err = invoke("check", str(tmp_path / "26.11.yaml\nlock fresh: ok"))
    assert code == 2
    [line] = err.strip().splitlines()
    assert line.endswith("/26.11.yaml\\nlock fresh: ok:1: (file): No such file or directory")


def test_check_names_the_image_whose_lock_is_stale(write_release: WriteRelease) -> None:
    manifest = write_release(GOOD_RELEASE)
    manifest.write_text(GOOD_RELEASE.replace('"0.12.0"', '"0.12.1"'), encoding="utf-8")
    code, out, err = invoke("check", str(manifest), "--offline")
    assert code == 2 and out == ""
    lock_lines = manifest.with_name("26.11.lock.json").read_text().splitlines()
    line = lock_lines.index('    "jax": {') + 1  # the image's entry, where a reviewer looks
    assert err.strip().splitlines() == [
        f"releases/26.11.lock.json:{line}: images.jax: lock is stale (pip: -jax[cuda13]==0.12.0 "
        "-jaxlib==0.12.0 +jax[cuda13]==0.12.1 +jaxlib==0.12.1): lock again"]


def test_validate_needs_an_image_or_host() -> None:
    code, _, err = invoke("validate")
    assert code == 2 and "give IMAGE, or --host" in err


def test_validate_host_runs_the_real_runner_here(tmp_path: Path) -> None:
    # No framework is installed in the test interpreter: the probe must fail, not pass.
    code, out, _ = invoke("validate", "--host", "--framework", "jax", "--version", "0.12.0",
                          "--python", sys.executable, "--root", str(REPO), "--out",
                          str(tmp_path), "--json")
    assert code == 1
    checks = {c["id"]: c for c in json.loads(out)["checks"]}
    assert checks["framework.import"]["status"] == "fail"
    assert checks["jax.train_cpu"]["status"] == "skip"
    # No GPU code anywhere in this environment: the architecture check says so, never passes.
    assert checks["cuda.archs"]["status"] == "skip"
    summary = (tmp_path / "host-jax.summary.md").read_text()
    assert "**fail**" in summary and "- command: `" in summary
    assert (tmp_path / "host-jax.junit.xml").is_file()


def test_validate_host_rejects_a_bad_baseline_release(tmp_path: Path) -> None:
    code, _, err = invoke("validate", "--host", "--framework", "jax", "--root", str(REPO),
                          "--record-baseline", "2026-11", "--out", str(tmp_path))
    assert code == 2 and "--record-baseline" in err and "YY.MM" in err


def test_validate_host_unknown_framework_exits_2(tmp_path: Path) -> None:
    code, _, err = invoke("validate", "--host", "--framework", "nope", "--root", str(tmp_path))
    assert code == 2 and "no such framework folder" in err


def test_preflight_without_a_gpu_skips_and_exits_0(write_release: WriteRelease) -> None:
    code, out, _ = invoke("preflight", "--release", str(write_release(GOOD_RELEASE)), "--json")
    assert code == 0
    checks = json.loads(out)["checks"]
    assert [c["status"] for c in checks] == ["skip"]
    assert checks[0]["message"].startswith("no GPU")


def test_rebuild_of_a_release_never_archived_exits_2(tmp_path: Path) -> None:
    code, _, err = invoke("rebuild", "26.10", "--archive", str(tmp_path / "archive"))
    assert code == 2 and "release 26.10 was never archived" in err


def test_verify_without_a_record_exits_2(write_release: WriteRelease, tmp_path: Path) -> None:
    code, _, err = invoke("verify", str(write_release(GOOD_RELEASE)), "--build-dir",
                          str(tmp_path))
    assert code == 2 and "no release record" in err


def test_ci_check_fails_on_stale_pipelines(write_release: WriteRelease, tmp_path: Path) -> None:
    manifest = str(write_release(GOOD_RELEASE))
    assert invoke("ci", manifest, "--out-dir", str(tmp_path), "--check")[0] == 1
    assert invoke("ci", manifest, "--out-dir", str(tmp_path))[0] == 0
    assert invoke("ci", manifest, "--out-dir", str(tmp_path), "--check")[0] == 0


def test_lock_only_names_an_image_of_the_release(write_release: WriteRelease) -> None:
    code, _, err = invoke("lock", str(write_release(GOOD_RELEASE)), "--only", "nope",
                          "--offline")
    assert code == 2 and err.strip() == "--only:1: only: no image named 'nope'"
    unlocked = write_release(GOOD_RELEASE, name="other.yaml", lock=False)
    code, _, err = invoke("lock", str(unlocked), "--only", "jax", "--offline")
    assert code == 2
    assert err.strip().endswith("releases/other.lock.json:1: lock: --only needs an existing lock")


def test_release_on_slurm_refuses_no_push(write_release: WriteRelease) -> None:
    code, _, err = invoke("release", str(write_release(GOOD_RELEASE)), "--offline",
                          "--validate-on", "slurm", "--no-push")
    assert code == 2 and "the node pulls the candidate it validates" in err
    assert "Traceback" not in err


def test_release_on_slurm_needs_the_sites_cluster(write_release: WriteRelease,
                                                  tmp_path: Path) -> None:
    site = tmp_path / "site.yaml"
    site.write_text("engines: []\n")
    manifest = str(write_release(GOOD_RELEASE))
    for option in ("--validate-on", "--on"):
        code, _, err = invoke("release", manifest, "--offline", option, "slurm", "--site",
                              str(site))
        assert code == 2
        assert err.strip().splitlines() == [f"{site}:1: slurm: no slurm: section; a Slurm job "
                                            "needs the cluster to submit to"]


def test_release_on_slurm_refuses_what_cannot_run_there(write_release: WriteRelease) -> None:
    for extra in (["--no-push"], ["--validate-on", "slurm"]):
        code, _, err = invoke("release", str(write_release(GOOD_RELEASE)), "--on", "slurm",
                              *extra)
        assert code == 2 and "--on slurm needs the push" in err, err


def test_release_on_slurm_refuses_runtime_host(write_release: WriteRelease,
                                               tmp_path: Path) -> None:
    site = tmp_path / "site.yaml"
    site.write_text("slurm:\n  runtime: host\n")
    code, _, err = invoke("release", str(write_release(GOOD_RELEASE)), "--offline",
                          "--validate-on", "slurm", "--site", str(site))
    assert code == 2 and f"{site}:1: slurm.runtime: host validates the site's Python" in err


def test_a_new_months_plan_says_what_moved_since_the_last_release(
    write_release: WriteRelease, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    """Before 26.12's first run its plan reads 26.11's record in the build dir: the shared
    layers' inputs did not move, the frameworks' reasons name what did since 26.11."""
    last = prepare(write_release(GOOD_RELEASE), None, stack_check=False)
    keys = content_keys(last.loaded, last.plan, last.rendered_by_name(), last.lock)
    registry = TableRegistry(address="registry.example:5000/ngc")
    record = ReleaseRecord(release="26.11", registry=registry.address, manifest="26.11.yaml")
    for name, key in keys.items():
        record.images[name] = ImageRecord(name=name, kind="framework")
        record.images[name].build.inputs = key.inputs()
    build_dir = tmp_path / "build"
    record_path(build_dir, "26.11").parent.mkdir(parents=True)
    record_path(build_dir, "26.11").write_text(record.model_dump_json())
    manifest = write_release(GOOD_RELEASE.replace('release: "26.11"', 'release: "26.12"'),
                             "26.12.yaml")
    options = PlanOptions(manifest, build_dir=build_dir, as_json=True)
    assert plan_command(options, FakeClient(FakeEngine()), registry) == 0
    rows = json.loads(capsys.readouterr().out)["images"]
    reasons = {row["image"]: row["reasons"] for row in rows}
    assert reasons["base"] == [
        "inputs unchanged since the recorded build, but not in the registry yet"]
    assert reasons["cuda-cu13"] == ["parent base is being built"]  # and nothing of its own
    assert "since 26.11: label org.ngc-builder.release: 26.11 -> 26.12" in reasons["jax"]


def test_the_revision_label_is_the_checkouts_when_the_templates_were_read(
    write_release: WriteRelease, project: Path,
) -> None:
    """A checkout edited while a release fills its cache (minutes) does not make the images
    say they were built from the edited tree: the revision is read with the templates."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(project), *args], capture_output=True,
                              text=True, check=True).stdout.strip()

    manifest = write_release(GOOD_RELEASE)
    git("init", "-q")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "release")
    prepared = prepare(manifest, None, stack_check=False)
    (project / "templates" / "base.Dockerfile.j2").write_text("# edited meanwhile\n")
    inputs = release_inputs(prepared, project / "build", {}, BuildNetwork(None, "172.17.0.1"))
    assert inputs.revision == prepared.revision == git("rev-parse", "HEAD")  # not -dirty
