"""Reproducible layers at render time (render/repro.py): the lock's epoch reaches every RUN,
every RUN goes through the build shell, every COPY is the ADD of a tar whose bytes hold no
time of the build. That the engine then builds the same layers is tests/integration/
test_reproducible.py's."""

from __future__ import annotations

import io
import re
import tarfile

import pytest

from ngc_builder.render.contexts import RenderedImage
from ngc_builder.render.repro import (
    BUILD_SHELL,
    BUILD_SHELL_SCRIPT,
    BUILD_SHELL_TAR,
    UNLOCKED_EPOCH,
    reproducible,
    source_epoch,
)
from tests.conftest import WriteRelease
from tests.unit.conftest import GOOD_RELEASE
from tests.unit.render.test_contexts import render

pytestmark = pytest.mark.unit
ADDED = re.compile(r"^ADD (copy-[0-9]{3}\.tar) /$", re.MULTILINE)


def added_files(image: RenderedImage) -> dict[str, tuple[int, bytes]]:
    """What the image's ADDed tars put where: path -> (mode, content)."""
    found: dict[str, tuple[int, bytes]] = {}
    for name in ADDED.findall(image.dockerfile):
        with tarfile.open(fileobj=io.BytesIO(image.files[name])) as tar:
            for member in tar:
                data = tar.extractfile(member) if member.isfile() else None
                found[member.name] = (member.mode, data.read() if data else b"")
    return found


def test_no_copy_is_left_and_every_add_is_a_tar_dated_the_epoch(
        write_release: WriteRelease) -> None:
    manifest = write_release(GOOD_RELEASE)
    epochs = set()
    for image in render(manifest):
        lines = image.dockerfile.splitlines()
        assert not [line for line in lines if line.startswith("COPY ")], image.spec.name
        epoch = int(re.findall(r"^ARG SOURCE_DATE_EPOCH=([0-9]+)$", image.dockerfile, re.M)[0])
        epochs.add(epoch)
        assert lines[-1] == 'SHELL ["/bin/sh", "-c"]'  # the image keeps the default shell
        assert f'SHELL ["{BUILD_SHELL}", "-c"]' in lines
        for name in ADDED.findall(image.dockerfile):
            with tarfile.open(fileobj=io.BytesIO(image.files[name])) as tar:
                members = tar.getmembers()
            assert {(m.mtime, m.uid, m.gid) for m in members} == {(epoch, 0, 0)}, name
            assert [m.name for m in members] == sorted(m.name for m in members)
    assert epochs == {UNLOCKED_EPOCH}  # this lock names no OS: the epoch of no release


def test_the_epoch_is_the_os_locks() -> None:
    """The CI release's lock holds its OS (built from .debs, dated its epoch)."""
    from ngc_builder.lock.models import load_lock
    from tests.conftest import REPO

    lock = load_lock(REPO / "tests" / "integration" / "data" / "releases" / "ci.lock.json")
    assert lock is not None and "debian-trixie" in lock.os
    assert source_epoch(lock.os, "debian-trixie") == lock.os["debian-trixie"].epoch
    assert source_epoch(lock.os, "debian-pulled") == UNLOCKED_EPOCH


def test_the_tars_put_each_file_where_copy_put_it(write_release: WriteRelease) -> None:
    images = {image.spec.name: image for image in render(write_release(GOOD_RELEASE))}
    base, jax = added_files(images["base"]), added_files(images["jax"])
    runner = images["base"].files["ngc_runner/core.py"]
    assert base["opt/ngc/lib/ngc_runner/core.py"] == (0o644, runner)
    assert base["opt/ngc/expect/00-base.json"][1] == images["base"].files["expect/00-base.json"]
    assert base["opt/ngc"] == (0o755, b"")  # the folders above, as the base made them
    lock = images["jax"].files["requirements.lock"]
    assert jax["opt/ngc/frameworks/jax/requirements.lock"] == (0o644, lock)
    assert jax["opt/ngc/probes/jax/probe.py"][1] == images["jax"].files["probe/probe.py"]
    assert jax["workspace"] == (0o1777, b"")  # /workspace stays writable by any UID


def test_the_base_brings_the_build_shell_before_its_first_run(
        write_release: WriteRelease) -> None:
    base = next(i for i in render(write_release(GOOD_RELEASE)) if i.spec.kind == "base")
    lines = base.dockerfile.splitlines()
    first_run = next(n for n, line in enumerate(lines) if line.startswith("RUN "))
    assert lines.index(f"ADD {BUILD_SHELL_TAR} /") < lines.index(
        f'SHELL ["{BUILD_SHELL}", "-c"]') < first_run
    with tarfile.open(fileobj=io.BytesIO(base.files[BUILD_SHELL_TAR])) as tar:
        shell = tar.getmember(BUILD_SHELL.lstrip("/"))
        assert shell.mode == 0o755
        script = tar.extractfile(shell)
        assert script is not None and script.read() == BUILD_SHELL_SCRIPT.encode()


def test_the_same_render_twice_gives_the_same_bytes() -> None:
    dockerfile = "FROM os\nCOPY a b /opt/ngc/x/\nRUN true\nCOPY d/ /workspace/d/\n"
    files = {"a": b"1", "b": b"2", "d/e": b"3"}
    once = reproducible(dockerfile, files, "framework", UNLOCKED_EPOCH)
    assert once == reproducible(dockerfile, dict(files), "framework", UNLOCKED_EPOCH)
    assert [line for line in once[0].splitlines() if not line.startswith("#")][:6] == [
        "FROM os", f"ARG SOURCE_DATE_EPOCH={UNLOCKED_EPOCH}", f'SHELL ["{BUILD_SHELL}", "-c"]',
        "ADD copy-000.tar /", "RUN true", "ADD copy-002.tar /"]


@pytest.mark.parametrize("line", ["COPY ../../etc/passwd /opt/ngc/x",
                                  "COPY a /opt/ngc/../../etc/cron.d/x", "COPY missing /opt/x",
                                  "COPY --chown=1000 a /opt/ngc/x"])
def test_a_copy_that_would_leave_its_folder_or_copies_nothing_is_refused(line: str) -> None:
    with pytest.raises(ValueError):
        reproducible(f"FROM os\n{line}\n", {"a": b"1"}, "framework", UNLOCKED_EPOCH)
