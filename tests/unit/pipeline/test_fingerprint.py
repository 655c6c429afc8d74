"""The no-op memo's fingerprint, attacked (issue 41): it never hangs on a FIFO or a device,
never follows a link out of the project's folders, and covers the builder's installed
libraries. Attacks on a real project go through the real CLI, as a release engineer meets
them: one line, exit 2, nothing written, at once."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ngc_builder.pipeline import noop
from ngc_builder.pipeline.options import ReleaseOptions
from tests.conftest import REPO, WriteRelease
from tests.unit.conftest import GOOD_RELEASE

pytestmark = pytest.mark.unit


def release(manifest: Path, build: Path, *extra: str) -> tuple[int, str, float]:
    """`ngc-builder release` as a subprocess: its exit code, stderr and seconds."""
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "ngc_builder", "release", str(manifest), "--offline",
         "--registry", "127.0.0.1:9/ngc", "--build-dir", str(build), *extra],
        capture_output=True, text=True, cwd=REPO, check=False, timeout=60)
    return done.returncode, done.stderr, time.monotonic() - started


@pytest.fixture
def manifest(write_release: WriteRelease, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("NGC_GPU", "none")  # a run the memo applies to: its fingerprint taken
    return write_release(GOOD_RELEASE)


@pytest.mark.timeout(90)
def test_a_link_to_dev_zero_in_a_framework_is_refused_as_check_refuses_it(
        manifest: Path, project: Path, tmp_path: Path) -> None:
    """Before: the fingerprint read /dev/zero through the link, for ever."""
    (project / "frameworks" / "jax" / "probe_zero.py").symlink_to("/dev/zero")
    code, err, seconds = release(manifest, tmp_path / "build")
    assert (code, err.splitlines()) == (2, [
        "frameworks/jax/probe_zero.py:1: (file): a link to a file outside frameworks/jax/: "
        "not followed"])
    assert seconds < 30 and not (tmp_path / "build").exists()


@pytest.mark.timeout(90)
def test_a_fifo_in_a_framework_is_refused_at_once(manifest: Path, project: Path,
                                                  tmp_path: Path) -> None:
    """Before: the fingerprint waited on the FIFO for ever (as `check` did too; it now
    refuses it at once, tests/unit/commands/test_unsafe_files.py)."""
    os.mkfifo(project / "frameworks" / "jax" / "probe_fifo.py")
    code, err, seconds = release(manifest, tmp_path / "build")
    assert (code, err.splitlines()) == (2, [
        "frameworks/jax/probe_fifo.py:1: (file): not a regular file (a FIFO): not read"])
    assert seconds < 30 and not (tmp_path / "build").exists()


def options_of(root: Path, tmp_path: Path) -> ReleaseOptions:
    return ReleaseOptions(root / "releases" / "26.11.yaml", registry="127.0.0.1:9/ngc",
                          build_dir=tmp_path / "build")


@pytest.fixture
def small(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project of a manifest, a lock and a template (the fingerprint reads no more)."""
    monkeypatch.setenv("NGC_GPU", "none")
    root = tmp_path / "small"
    for path, text in {"releases/26.11.yaml": "release: '26.11'\n",
                       "releases/26.11.lock.json": "{}\n",
                       "templates/base.Dockerfile.j2": "FROM scratch\n"}.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return root


def test_a_link_out_of_the_project_folders_means_no_memo(small: Path, tmp_path: Path) -> None:
    """What a link out names could change with nothing in the project changing: the
    fingerprint cannot stand for it, so no memo is read or kept (before: followed, and
    /dev/zero or a FIFO there hung the run)."""
    options = options_of(small, tmp_path)
    assert noop.fingerprint(options) is not None
    outside = tmp_path / "shared.j2"
    outside.write_text("FROM scratch\n")
    (small / "templates" / "shared.j2").symlink_to(outside)
    assert noop.fingerprint(options) is None
    (small / "templates" / "shared.j2").unlink()
    (small / "templates" / "zero.j2").symlink_to("/dev/zero")
    assert noop.fingerprint(options) is None


def test_a_link_inside_is_its_target_text_and_the_file_is_read_where_it_lies(
        small: Path, tmp_path: Path) -> None:
    options = options_of(small, tmp_path)
    (small / "templates" / "alias.j2").symlink_to("base.Dockerfile.j2")
    first = noop.fingerprint(options)
    (small / "templates" / "base.Dockerfile.j2").write_text("FROM debian\n")
    second = noop.fingerprint(options)
    (small / "templates" / "alias.j2").unlink()
    (small / "templates" / "alias.j2").symlink_to("./base.Dockerfile.j2")
    assert len({first, second, noop.fingerprint(options)}) == 3 and None not in {first, second}


def test_a_framework_folder_that_is_itself_a_link_is_read_whole(small: Path,
                                                                tmp_path: Path) -> None:
    """As `check` allows (a checkout linking a shared framework in): its files count."""
    shared = tmp_path / "shared" / "jax"
    shared.mkdir(parents=True)
    (shared / "probe.py").write_text("print(1)\n")
    (small / "frameworks").mkdir()
    (small / "frameworks" / "jax").symlink_to(shared)
    options = options_of(small, tmp_path)
    first = noop.fingerprint(options)
    (shared / "probe.py").write_text("print(2)\n")
    second = noop.fingerprint(options)
    assert first is not None and second not in (None, first)


def test_the_builders_installed_libraries_are_covered(small: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Another Jinja2 renders other Dockerfiles under the same fingerprint (before: only the
    builder's own code counted)."""
    site = tmp_path / "site-packages"
    info = site / "jinja2-3.1.6.dist-info"
    info.mkdir(parents=True)
    (info / "RECORD").write_text("jinja2/__init__.py,sha256=abc,100\n")
    monkeypatch.setattr(sys, "path", [*sys.path, str(site)])
    options = options_of(small, tmp_path)
    first = noop.fingerprint(options)
    (info / "RECORD").write_text("jinja2/__init__.py,sha256=def,100\n")
    second = noop.fingerprint(options)
    info.rename(site / "jinja2-3.1.7.dist-info")
    assert len({first, second, noop.fingerprint(options)}) == 3


def test_the_fingerprint_stays_fast_on_the_repositorys_own_project(tmp_path: Path) -> None:
    """What a memo-answered rerun costs besides the registry's answers (measured 17 ms)."""
    options = ReleaseOptions(REPO / "releases" / "26.11.yaml", registry="127.0.0.1:9/ngc",
                             build_dir=tmp_path / "build")
    started = time.monotonic()
    assert noop.fingerprint(options) is not None
    assert time.monotonic() - started < 1


@pytest.mark.timeout(90)
def test_a_lock_that_is_a_fifo_is_refused_at_once(manifest: Path, tmp_path: Path) -> None:
    """Before: the fingerprint waited on it for ever (and so did the lock's own loader, which
    now reads through the same bounded reader)."""
    lock = manifest.with_name("26.11.lock.json")
    lock.unlink()
    os.mkfifo(lock)
    code, err, seconds = release(manifest, tmp_path / "build")
    assert (code, err.splitlines()) == (2, [
        f"{lock}:1: lock: not a regular file (a FIFO): not read"])
    assert seconds < 30 and not (tmp_path / "build").exists()
