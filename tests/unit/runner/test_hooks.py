"""Site hooks of /opt/ngc/entrypoint.d: printed, sourced in sorted order, a failure named."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ngc_builder.runner import entry
from ngc_builder.runner.hooks import HookFailed, hook_files, run_hooks

pytestmark = pytest.mark.unit


@pytest.fixture(autouse=True)
def own_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hooks change os.environ: monkeypatch puts back whatever the test's hooks touched."""
    for key in ("SITE_FABRIC", "ORDER", "DOOMED", "AFTER_EXIT"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("DOOMED", "still here")


def hooks(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def test_hooks_run_in_sorted_order_and_their_exports_and_unsets_reach_the_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    folder = hooks(tmp_path, {"30-second.sh": 'export ORDER="$SITE_FABRIC-then-30"\n',
                              "20-first.sh": "export SITE_FABRIC=ib\nunset DOOMED\n",
                              "10-notice.txt": "site notice\n", "40-ignored.py": "raise\n",
                              "50-README": "not a hook\n"})
    monkeypatch.setenv("ORDER", "before")
    shown = io.StringIO()
    run_hooks(folder, shown)
    assert shown.getvalue() == "site notice\n"
    assert os.environ["SITE_FABRIC"] == "ib" and os.environ["ORDER"] == "ib-then-30"
    assert "DOOMED" not in os.environ
    assert [path.name for path in hook_files(folder)] == [
        "10-notice.txt", "20-first.sh", "30-second.sh"]


def test_a_failing_hook_stops_the_rest_and_is_named(tmp_path: Path) -> None:
    folder = hooks(tmp_path, {"10-bad.sh": "echo about to fail\nfalse\n",
                              "20-never.sh": "export SITE_FABRIC=never\n"})
    with pytest.raises(HookFailed, match=r"hook .*10-bad\.sh failed \(exit 1\)"):
        run_hooks(folder, io.StringIO())
    assert "SITE_FABRIC" not in os.environ


def test_a_hook_that_exits_the_shell_changes_nothing(tmp_path: Path) -> None:
    folder = hooks(tmp_path, {"10-done.sh": "export AFTER_EXIT=1\nexit 0\n"})
    run_hooks(folder, io.StringIO())
    assert "AFTER_EXIT" not in os.environ and os.environ["DOOMED"] == "still here"


def test_no_hook_folder_is_no_hook(tmp_path: Path) -> None:
    run_hooks(tmp_path / "absent", io.StringIO())
    assert hook_files(tmp_path / "absent") == []


def test_the_entrypoint_names_the_failed_hook_and_does_not_start_the_command(
    tmp_path: Path,
) -> None:
    folder = hooks(tmp_path, {"50-site.sh": "return 3\n", "10-ok.sh": "export SITE_FABRIC=ib\n"})
    env = {**os.environ, "NGC_ENTRYPOINT_D": str(folder), "NGC_BANNER": "off"}
    command = [sys.executable, "-m", "ngc_builder.runner.entry", "touch", str(tmp_path / "ran")]
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    assert done.returncode == entry.HOOK_FAILED
    assert not (tmp_path / "ran").exists()
    assert "50-site.sh failed (exit 3); touch was not started" in done.stderr
    (folder / "50-site.sh").unlink()
    shown = [sys.executable, "-m", "ngc_builder.runner.entry", "sh", "-c", "echo $SITE_FABRIC"]
    done = subprocess.run(shown, capture_output=True, text=True, env=env, check=False)
    assert (done.returncode, done.stdout) == (0, "ib\n")
