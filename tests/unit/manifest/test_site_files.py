"""The site file, attacked (issue 41): `--site /dev/zero`, `NGC_SITE=/dev/zero`, a FIFO, a
committed `site.yaml` that is no regular file, one over the 1 MiB bound: each refused in one
line, at once, by the loader and by `release` (whose fingerprint read it first, without the
loader's bound) before anything is written."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ngc_builder.errors import InputError
from ngc_builder.manifest.site import Site, load_site
from tests.conftest import REPO, WriteRelease
from tests.unit.conftest import GOOD_RELEASE

pytestmark = pytest.mark.unit
DEVICE = "not a regular file (a character device): not read"
FIFO = "not a regular file (a FIFO): not read"


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "site.fifo"
    os.mkfifo(path)
    return path


def load_refusal(explicit: Path | None, root: Path) -> str:
    started = time.monotonic()
    with pytest.raises(InputError) as refused:
        load_site(explicit, root)
    assert time.monotonic() - started < 5
    return str(refused.value)


@pytest.mark.timeout(30)
def test_the_loader_refuses_a_device_a_fifo_and_a_large_file_at_once(
        tmp_path: Path, fifo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert load_refusal(Path("/dev/zero"), tmp_path) == f"/dev/zero:1: (file): {DEVICE}"
    assert load_refusal(fifo, tmp_path) == f"{fifo}:1: (file): {FIFO}"
    monkeypatch.setenv("NGC_SITE", "/dev/zero")
    assert load_refusal(None, tmp_path) == f"/dev/zero:1: (file): {DEVICE}"
    large = tmp_path / "large.yaml"
    large.write_text("#" * ((1 << 20) + 1))
    assert load_refusal(large, tmp_path) == f"{large}:1: (file): larger than 1024 KiB (the limit)"


@pytest.mark.timeout(30)
def test_a_committed_site_file_that_is_no_regular_file_is_refused_not_passed_over(
        tmp_path: Path) -> None:
    """Before: `site.yaml` linked to /dev/zero (or a FIFO) was taken for no site file at all
    by the loader, and hung the release's fingerprint."""
    (tmp_path / "site.yaml").symlink_to("/dev/zero")
    assert load_refusal(None, tmp_path) == f"{tmp_path / 'site.yaml'}:1: (file): {DEVICE}"
    (tmp_path / "site.yaml").unlink()
    os.mkfifo(tmp_path / "site.yaml")
    assert load_refusal(None, tmp_path) == f"{tmp_path / 'site.yaml'}:1: (file): {FIFO}"
    (tmp_path / "site.yaml").unlink()
    assert load_site(None, tmp_path) == Site()  # none there: the defaults


def release(manifest: Path, build: Path, *extra: str) -> tuple[int, list[str]]:
    done = subprocess.run(
        [sys.executable, "-m", "ngc_builder", "release", str(manifest), "--offline",
         "--registry", "127.0.0.1:9/ngc", "--build-dir", str(build), *extra],
        capture_output=True, text=True, cwd=REPO, check=False, timeout=60)
    return done.returncode, done.stderr.splitlines()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("how", ["--site /dev/zero", "NGC_SITE=/dev/zero", "--site FIFO"])
def test_release_refuses_the_site_before_anything_is_written(
        write_release: WriteRelease, tmp_path: Path, fifo: Path,
        monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    """Before: each hung `release` (the fingerprint hashed the site file, unbounded, before
    the loader saw it); the loader alone would have refused it only after the build
    contexts and a signing key were written."""
    monkeypatch.setenv("NGC_GPU", "none")  # a run the memo applies to
    extra: list[str] = []
    if how.startswith("NGC_SITE"):
        monkeypatch.setenv("NGC_SITE", "/dev/zero")
    else:
        extra = ["--site", str(fifo) if how.endswith("FIFO") else "/dev/zero"]
    build = tmp_path / "build"
    code, err = release(write_release(GOOD_RELEASE), build, *extra)
    named = fifo if how.endswith("FIFO") else "/dev/zero"
    assert (code, err) == (2, [f"{named}:1: (file): {FIFO if how.endswith('FIFO') else DEVICE}"])
    assert not build.exists() and not (tmp_path / "state").exists()


@pytest.mark.timeout(120)
def test_check_refuses_a_manifest_that_is_a_fifo_at_once(tmp_path: Path) -> None:
    """The manifest loader's reader is the same one (before: `check FIFO` waited for ever)."""
    manifest = tmp_path / "releases" / "26.11.yaml"
    manifest.parent.mkdir()
    os.mkfifo(manifest)
    done = subprocess.run([sys.executable, "-m", "ngc_builder", "check", str(manifest),
                           "--offline"], capture_output=True, text=True, cwd=REPO,
                          check=False, timeout=60)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [f"releases/26.11.yaml:1: (file): {FIFO}"]


@pytest.mark.parametrize("partition", ["grace --wrap=reboot", "grace\\nx", "$(reboot)"])
def test_an_arm64_partition_that_is_no_slurm_word_is_refused_in_one_line(
        tmp_path: Path, partition: str) -> None:
    """It becomes `--partition=` of the arm64 validation jobs: one word or nothing."""
    site = tmp_path / "site.yaml"
    site.write_text(f'slurm:\n  arm64_partition: "{partition}"\n')
    refusal = load_refusal(site, tmp_path)
    assert refusal.startswith(f"{site}:2: slurm.arm64_partition:") and "\n" not in refusal


def test_a_site_that_still_lists_build_hosts_is_told_what_replaced_them(tmp_path: Path) -> None:
    """The multi-host scheduler of `engines:` is gone: one line, not a silent single-host run
    nor pydantic's 'extra inputs'."""
    site = tmp_path / "site.yaml"
    site.write_text("engines:\n  - name: b1\n    url: tcp://builder-1.example:2376\n"
                    "  - name: b2\n    url: tcp://builder-2.example:2376\n")
    refusal = load_refusal(site, tmp_path)
    assert refusal.startswith(f"{site}:1: engines: the build hosts of `engines:` are gone")
    assert "Slurm" in refusal and "\n" not in refusal
    site.write_text("engines: []\nci:\n  gitlab_tags: [docker]\n")  # nothing listed: fine
    assert load_site(site, tmp_path).ci.gitlab_tags == ["docker"]


def test_a_ci_variable_named_like_a_setting_of_ours_is_refused(tmp_path: Path) -> None:
    """The pipelines export it into every job, where the guard would refuse every command
    for an NGC_ name it does not read."""
    site = tmp_path / "site.yaml"
    hostile = "NGC" + "_PROD_TOKEN"  # spelt apart: the project's own NGC_ names are scanned
    site.write_text(f"ci:\n  password_secret: {hostile}\n")
    assert "starts with NGC_, which names ngc-builder's settings" in load_refusal(site, tmp_path)
    site.write_text("ci:\n  password_secret: PROD_TOKEN\n")
    assert load_site(site, tmp_path).ci.password_secret == "PROD_TOKEN"


@pytest.mark.timeout(120)
def test_release_refuses_a_site_the_models_refuse_before_anything_is_written(
        write_release: WriteRelease, tmp_path: Path) -> None:
    """A regular site file with a bad value: before, `release` asked the index (the stack
    check) and wrote every build context before it loaded the site."""
    site = tmp_path / "bad-site.yaml"
    site.write_text("slurm:\n  partition: gpu\n  time_limit: forever\n")
    build = tmp_path / "build"
    code, err = release(write_release(GOOD_RELEASE), build, "--site", str(site))
    assert (code, err) == (2, [f"{site}:3: slurm.time_limit: not a valid Slurm time limit "
                               "([D-]HH:MM:SS): 'forever'"])
    assert not build.exists()
