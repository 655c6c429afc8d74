"""The check each locked install ends with: installed == locked, or every difference named."""

from __future__ import annotations

from pathlib import Path

import pytest

from ngc_builder.runner import lockcheck

pytestmark = pytest.mark.unit

LOCK = """\
numpy==2.5.5 --hash=sha256:aaaa
ml_dtypes==0.6.0 \\
    --hash=sha256:bbbb
# a comment
six==1.17.0 --hash=sha256:cccc
"""


def test_pins_are_read_normalised() -> None:
    assert lockcheck.locked_pins(LOCK) == {"numpy": "2.5.5", "ml-dtypes": "0.6.0",
                                           "six": "1.17.0"}


def test_every_difference_is_named() -> None:
    installed = {"numpy": "2.5.6", "ml-dtypes": "0.6.0"}
    assert lockcheck.differences(lockcheck.locked_pins(LOCK), installed) == [
        "numpy: locked 2.5.5, installed 2.5.6", "six: locked 1.17.0, installed nothing"]


def test_this_environment_passes_its_own_versions(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from importlib import metadata

    pinned = tmp_path / "ok.lock"
    pinned.write_text(f"pytest=={metadata.version('pytest')}\n")
    assert lockcheck.main([str(pinned)]) == 0
    wrong = tmp_path / "wrong.lock"
    wrong.write_text("pytest==0.0.1\n")
    assert lockcheck.main([str(wrong)]) == 1
    assert "lock check: pytest: locked 0.0.1, installed" in capsys.readouterr().err
