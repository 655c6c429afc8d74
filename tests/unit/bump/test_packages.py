"""A row's extra packages and tools bumped against recorded metadata: newest that fits the
framework and the row's other packages, never one that needs CUDA wheels or a newer Python."""

from __future__ import annotations

import pytest

from ngc_builder.bump.describe import describe
from ngc_builder.bump.plan import BumpResult, plan_bump
from ngc_builder.commands.bump import BumpOptions, bump_command
from ngc_builder.manifest.load import load_release
from ngc_builder.manifest.wheels import WheelMetadata
from tests.conftest import WriteRelease
from tests.unit.bump.recorded import Recorded, plain
from tests.unit.conftest import GOOD_RELEASE

pytestmark = pytest.mark.unit

WITH_PACKAGES = GOOD_RELEASE.replace('''    version: "2.15.0"
    stack: cu13
''', '''    version: "2.15.0"
    stack: cu13
    # the exporter's packages
    extra_packages:
      onnx: "1.23.2"
      onnxscript: "0.7.2"
    tools:
      jupyterlab: "4.6.6"
      tensorboard: "2.21.0"
''', 1)
TODAY = (
    plain("onnx", "1.23.2"), plain("onnxscript", "0.7.2"),
    plain("jupyterlab", "4.6.6"), plain("tensorboard", "2.21.0"),
)


def bump(write_release: WriteRelease, recorded: Recorded) -> BumpResult:
    return plan_bump(load_release(write_release(WITH_PACKAGES)), recorded.index, recorded.fetch)


def moves(result: BumpResult) -> dict[str, str]:
    return {f"{c.field}.{c.name}": c.new for c in result.packages}


def test_nothing_newer_moves_nothing_and_says_nothing(write_release: WriteRelease) -> None:
    result = bump(write_release, Recorded().add(*TODAY))
    assert moves(result) == {"extra_packages.onnx": "1.23.2", "extra_packages.onnxscript":
                             "0.7.2", "tools.jupyterlab": "4.6.6", "tools.tensorboard": "2.21.0"}
    assert not any("extra_packages" in line or "tools." in line for line in describe(result))


def test_each_moves_to_the_newest_that_fits_and_says_why_not_newer(
    write_release: WriteRelease,
) -> None:
    recorded = Recorded().add(
        *TODAY,
        # onnxscript 0.8.0 asks a newer onnx: both move, in a second round.
        WheelMetadata("onnxscript", "0.8.0", ">=3.10", ("onnx>=1.24",)),
        plain("onnx", "1.24.0"),
        WheelMetadata("onnx", "1.25.0", ">=3.14", ()),  # too new for the base's 3.13
        plain("jupyterlab", "4.7.1"),
        # TensorBoard 2.22 would bring CUDA wheels into a tool.
        WheelMetadata("tensorboard", "2.22.0", "", ('nvidia-cublas>=13; sys_platform == "linux"',)))
    result = bump(write_release, recorded)
    assert moves(result) == {"extra_packages.onnx": "1.24.0", "extra_packages.onnxscript":
                             "0.8.0", "tools.jupyterlab": "4.7.1", "tools.tensorboard": "2.21.0"}
    lines = [line for line in describe(result) if line.startswith("pytorch ")][1:]
    assert lines == [
        "pytorch extra_packages.onnx 1.23.2 -> 1.24.0 (not newer: onnx 1.25.0 needs Python "
        ">=3.14, base has 3.13)",
        "pytorch extra_packages.onnxscript 0.7.2 -> 0.8.0",
        "pytorch tools.jupyterlab 4.6.6 -> 4.7.1",
        "pytorch tools.tensorboard held at 2.21.0: tensorboard 2.22.0 asks for CUDA libraries "
        "(nvidia-cublas): extra packages and tools never move a stack",
    ]


def test_what_the_framework_asks_of_a_package_holds_it(write_release: WriteRelease) -> None:
    recorded = Recorded().add(*TODAY, plain("jupyterlab", "5.0.0"))
    recorded.wheels = [w if w.name != "torch" else WheelMetadata(
        "torch", w.version, w.requires_python, (*w.requires_dist, "jupyterlab<5")) for w in
        recorded.wheels]
    [jupyterlab] = [c for c in bump(write_release, recorded).packages if c.name == "jupyterlab"]
    assert (jupyterlab.new, jupyterlab.reasons) == (
        "4.6.6", ("jupyterlab 5.0.0: torch 2.15.0 asks jupyterlab<5",))


def test_the_new_manifest_carries_the_moved_packages_with_comments(
    write_release: WriteRelease,
) -> None:
    manifest = write_release(WITH_PACKAGES)
    recorded = Recorded().add(*TODAY, plain("jupyterlab", "4.7.1"))
    options = BumpOptions(manifest, "26.12", lock=False)
    assert bump_command(options, index=recorded.index, fetch=recorded.fetch) == 0
    written = manifest.with_name("26.12.yaml").read_text()
    assert '      jupyterlab: "4.7.1"\n      tensorboard: "2.21.0"\n' in written
    assert "    # the exporter's packages\n" in written
    assert load_release(manifest.with_name("26.12.yaml")).release.images[0].tools == {
        "jupyterlab": "4.7.1", "tensorboard": "2.21.0"}
