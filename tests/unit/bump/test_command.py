"""`ngc-builder bump`: the new manifest is an edit of the old one, written only when consistent."""

from __future__ import annotations

from pathlib import Path

import pytest

from ngc_builder.commands.bump import BumpOptions, bump_command
from ngc_builder.errors import InputError
from ngc_builder.lock.models import load_lock, lock_path
from ngc_builder.manifest.load import load_release
from tests.conftest import WriteRelease
from tests.unit.bump.recorded import TORCH_216, Recorded, jax, jaxlib, plugin
from tests.unit.conftest import GOOD_RELEASE

pytestmark = pytest.mark.unit
COMMENTED = GOOD_RELEASE.replace("images:\n", "images:\n  # PyTorch first: it pins the stack.\n")


Locked = list[tuple[Path, list[str]]]


def run(manifest: Path, recorded: Recorded, **options: object) -> tuple[int, Locked]:
    locked: Locked = []

    def locker(path: Path, moved: list[str]) -> int:
        locked.append((path, moved))
        return 0

    code = bump_command(BumpOptions(manifest, **options), locker,  # type: ignore[arg-type]
                        recorded.index, recorded.fetch)
    return code, locked


def test_the_new_manifest_keeps_comments_and_moves_only_what_the_bump_moved(
    write_release: WriteRelease, tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    manifest = write_release(COMMENTED)
    report = tmp_path / "proposal.md"
    code, locked = run(manifest, Recorded().add(*TORCH_216), to="26.12", report=report)
    target = manifest.with_name("26.12.yaml")
    # Last month's lock seeded the new one; the stack moved, so it and all on it lock again.
    assert code == 0 and locked == [(target, ["cuda-cu13", "pytorch", "jax"])]
    assert load_lock(lock_path(target)).release == "26.12"  # type: ignore[union-attr]
    old, new = manifest.read_text().splitlines(), target.read_text().splitlines()
    changed = [(a, b) for a, b in zip(old, new, strict=True) if a != b]
    assert ('release: "26.11"', 'release: "26.12"') in changed
    assert ('    version: "2.15.0"', '    version: "2.16.0"') in changed
    assert ('    cuda: "13.2"', '    cuda: "13.3"') in changed
    assert ('      nvidia-cudnn-cu13: "9.26.0.51"',
            '      nvidia-cudnn-cu13: "9.28.0.40"') in changed
    assert "  # PyTorch first: it pins the stack." in new
    assert len(changed) == 7  # release, torch, cuda, toolkit, cublas, runtime, cudnn
    bumped = load_release(target).release
    assert bumped.release == "26.12" and bumped.images[0].version == "2.16.0"
    assert "pytorch 2.15.0 -> 2.16.0" in capsys.readouterr().out
    assert "- cu13 nvidia-cudnn-cu13 9.26.0.51 -> 9.28.0.40 (torch 2.16.0 pins it)" in \
        report.read_text()


def test_a_stack_that_cannot_be_satisfied_writes_no_manifest(
    write_release: WriteRelease, tmp_path: Path,
) -> None:
    manifest = write_release(GOOD_RELEASE)
    # jax 0.13.0 wants a cuDNN newer than the only one the index holds.
    recorded = Recorded().add(jax("0.13.0"), jaxlib("0.13.0"),
                              plugin("0.13.0", cudnn="nvidia-cudnn-cu13<10,>=9.40"))
    recorded.wheels = [w for w in recorded.wheels if w.version != "0.12.0" or
                       w.name not in ("jax", "jaxlib", "jax-cuda13-plugin")]
    report = tmp_path / "proposal.md"
    code, locked = run(manifest, recorded, to="26.12", report=report)
    assert code == 1 and locked == []
    assert not manifest.with_name("26.12.yaml").exists()
    assert not lock_path(manifest.with_name("26.12.yaml")).exists()
    assert "## Conflicts" in report.read_text()


@pytest.mark.parametrize(("to", "message"), [("26.13", "is not a release id"),
                                             ("26.10", "is not after 26.11")])
def test_a_bad_target_release_is_refused(write_release: WriteRelease, to: str,
                                         message: str) -> None:
    manifest = write_release(GOOD_RELEASE)
    with pytest.raises(InputError, match=message):
        run(manifest, Recorded(), to=to)


def test_an_existing_target_is_replaced_only_when_forced(write_release: WriteRelease) -> None:
    manifest = write_release(GOOD_RELEASE)
    manifest.with_name("26.12.yaml").write_text("kept")
    with pytest.raises(InputError, match="exists already"):
        run(manifest, Recorded(), to="26.12")
    assert run(manifest, Recorded(), to="26.12", force=True, lock=False) == (0, [])
    assert manifest.with_name("26.12.yaml").read_text() != "kept"
