"""Hostile framework folders and templates, and a `render --out` into someone's folder: each
refused in one line, nothing read from outside the project, nothing deleted that render did
not write."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ngc_builder.errors import InputError
from ngc_builder.files import UnsafeFile
from ngc_builder.manifest.load import load_release
from ngc_builder.pipeline.prepare import prepare
from ngc_builder.render.contexts import MARKER, write_all
from tests.conftest import WriteRelease
from tests.unit.conftest import GOOD_RELEASE

pytestmark = pytest.mark.unit


def problems_of(manifest: Path) -> list[str]:
    with pytest.raises(InputError) as caught:
        prepare(manifest, None, stack_check=False)
    return [str(problem) for problem in caught.value.problems]


@pytest.mark.parametrize("name", ["probe_extra.py", "layer.Dockerfile.j2", "sub/notes.txt"])
def test_a_link_out_of_a_framework_folder_is_not_followed(
        write_release: WriteRelease, project: Path, tmp_path: Path, name: str) -> None:
    secret = tmp_path / "docker-config.json"
    secret.write_text('{"auths": {"registry": {"auth": "c2VjcmV0"}}}')
    link = project / "frameworks" / "jax" / name
    link.parent.mkdir(exist_ok=True)
    link.unlink(missing_ok=True)
    link.symlink_to(secret)
    assert problems_of(write_release(GOOD_RELEASE)) == [
        f"frameworks/jax/{name}:1: (file): a link to a file outside frameworks/jax/: "
        "not followed"]


def test_links_inside_the_folder_and_a_linked_folder_are_fine(
        write_release: WriteRelease, project: Path, tmp_path: Path) -> None:
    shared = tmp_path / "shared-jax"
    (project / "frameworks" / "jax").rename(shared)
    (project / "frameworks" / "jax").symlink_to(shared)  # a checkout linking a framework in
    (shared / "probe_alias.py").symlink_to("probe.py")
    loaded = load_release(write_release(GOOD_RELEASE))
    assert "jax" in loaded.frameworks


@pytest.mark.parametrize(("line", "message"), [
    ("{{ 1 // 0 }}", "template: ZeroDivisionError: integer division or modulo by zero"),
    ('{{ "a" + 1 }}', "template: TypeError: can only concatenate str (not \"int\") to str"),
])
def test_a_template_that_fails_as_it_renders_names_its_line(
        write_release: WriteRelease, project: Path, line: str, message: str) -> None:
    template = project / "frameworks" / "jax" / "layer.Dockerfile.j2"
    lines = template.read_text().count("\n")
    template.write_text(template.read_text() + line + "\n")
    assert problems_of(write_release(GOOD_RELEASE)) == [
        f"frameworks/jax/layer.Dockerfile.j2:{lines + 1}: {message}"]


def test_a_template_that_is_not_utf8_names_its_line(write_release: WriteRelease,
                                                     project: Path) -> None:
    template = project / "frameworks" / "jax" / "layer.Dockerfile.j2"
    lines = template.read_bytes().count(b"\n")
    template.write_bytes(template.read_bytes() + b"RUN echo \xff\xfe\n")
    assert problems_of(write_release(GOOD_RELEASE)) == [
        f"frameworks/jax/layer.Dockerfile.j2:{lines + 1}: template: not UTF-8 text"]


def test_a_template_may_include_nothing_outside_the_projects_folders(
        write_release: WriteRelease, project: Path) -> None:
    """What a render reads is what a no-op re-run's fingerprint covers (pipeline/noop.py)."""
    (project / "notes").mkdir()
    (project / "notes" / "extra.txt").write_text("RUN echo from outside\n")
    template = project / "frameworks" / "jax" / "layer.Dockerfile.j2"
    lines = template.read_text().count("\n")
    template.write_text(template.read_text() + '{% include "notes/extra.txt" %}\n')
    [problem] = problems_of(write_release(GOOD_RELEASE))
    assert problem.startswith(f"frameworks/jax/layer.Dockerfile.j2:{lines + 1}: ")
    assert "notes/extra.txt: not in the project's templates, frameworks" in problem


def test_render_out_leaves_a_folder_it_did_not_write_and_writes_nothing(
        write_release: WriteRelease, tmp_path: Path) -> None:
    rendered = prepare(write_release(GOOD_RELEASE), None, stack_check=False).rendered
    out = tmp_path / "home"
    (out / "jax").mkdir(parents=True)
    (out / "jax" / "notes.txt").write_text("precious")
    with pytest.raises(InputError, match=r"home/jax:1: --out: exists and was not written"):
        write_all(rendered, out)
    assert sorted(path.name for path in out.iterdir()) == ["jax"]  # nothing half-done
    assert (out / "jax" / "notes.txt").read_text() == "precious"


def test_render_out_replaces_its_own_earlier_output(write_release: WriteRelease,
                                                    tmp_path: Path) -> None:
    rendered = prepare(write_release(GOOD_RELEASE), None, stack_check=False).rendered
    out = tmp_path / "out"
    write_all(rendered, out)
    (out / "jax" / "stale.txt").write_text("from an older render")
    written = write_all(rendered, out)
    assert all((path / MARKER).is_file() for path in written)
    assert not (out / "jax" / "stale.txt").exists()


def test_a_shared_template_linked_out_of_templates_is_not_followed(
        write_release: WriteRelease, project: Path, tmp_path: Path) -> None:
    """templates/ had no rule of its own: a link there to a file of the build host went
    whole into every Dockerfile."""
    secret = tmp_path / "docker-config.json"
    secret.write_text('{"auths": {"registry": {"auth": "c2VjcmV0"}}}')
    template = project / "templates" / "base.Dockerfile.j2"
    template.unlink()
    template.symlink_to(secret)
    [problem] = problems_of(write_release(GOOD_RELEASE))
    assert problem == ("templates/base.Dockerfile.j2:1: template: a link to a file outside "
                       "templates/: not followed")
    assert "c2VjcmV0" not in problem


@pytest.mark.timeout(60)
def test_a_template_that_is_a_fifo_is_refused_at_once(write_release: WriteRelease,
                                                      project: Path) -> None:
    template = project / "templates" / "base.Dockerfile.j2"
    template.unlink()
    os.mkfifo(template)
    with pytest.raises(UnsafeFile, match=r"not a regular file \(a FIFO\)"):
        prepare(write_release(GOOD_RELEASE), None, stack_check=False)


@pytest.mark.parametrize("copy", ["COPY --chown=1000 probe/ /opt/ngc/mine/",
                                  "COPY probe/probe.py /opt/ngc/../../etc/cron.d/job"])
def test_a_framework_copy_the_render_cannot_make_reproducible_is_one_line(
        write_release: WriteRelease, project: Path, copy: str) -> None:
    """render/repro.py makes every COPY a root-owned tar dated the lock's epoch: a flag it
    would drop, or a target outside the image's folders, is refused naming the image."""
    layer = project / "frameworks" / "jax" / "layer.Dockerfile.j2"
    layer.write_text(layer.read_text() + f"\n{copy}\n")
    found = problems_of(write_release(GOOD_RELEASE))
    assert len(found) == 1 and found[0].startswith("(template of jax):1: template: ValueError: ")
