"""Charliecloud's side on this host: command lines, whom ch-run runs as, the private copy's
folder, and the process runner (real `sh`, no Charliecloud needed)."""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from ngc_builder.validate.chrun import (
    Account,
    SubprocessProcesses,
    ToolMissing,
    convert_argv,
    is_reference,
    person_command,
    private_scratch,
    run_account,
    run_argv,
    run_environment,
    unreachable_parent,
)

pytestmark = pytest.mark.unit
NOBODY = Account("nobody", 65534, 65534, "/nonexistent")
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="switching UID needs root")


def test_ch_run_applies_env_mounts_read_only_and_skips_nothing_else() -> None:
    argv = run_argv(Path("/s/image"), "/workspace", ["python", "-m", "ngc_runner"])
    assert argv == ["ch-run", "--private-tmp", "--cd", "/workspace", "--set-env", "/s/image",
                    "--", "python", "-m", "ngc_runner"]
    assert "-w" not in argv and "--write" not in argv and "--home" not in argv
    assert run_argv(Path("/s/image"), "", ["true"])[3] == "/"  # no WORKDIR: the root


def test_ch_convert_gets_the_name_as_one_argument_after_its_options() -> None:
    argv = convert_argv("localhost:5000/jax:26.12-py3", Path("/s/image"), Path("/s/convert"))
    assert argv == ["ch-convert", "-i", "docker", "-o", "dir", "--tmp", "/s/convert",
                    "localhost:5000/jax:26.12-py3", "/s/image"]


@pytest.mark.parametrize("ref", ["localhost:5000/jax:26.12-py3", "ngc-local/jax:26.11-py3-f53",
                                 "sha256:" + "0" * 64, "5723b45f3197",
                                 "reg.example.com/ns/img@sha256:" + "a" * 64])
def test_references_and_ids_are_accepted(ref: str) -> None:
    assert is_reference(ref)


@pytest.mark.parametrize("ref", ["-v", "--tmp=/", "a b", "a;b", "$(id)", "x\n", "", "a/../b",
                                 "jax:26.12`id`", "é"])
def test_anything_else_is_not_a_reference(ref: str) -> None:
    assert not is_reference(ref)


def test_root_runs_images_as_nobody() -> None:
    account = run_account(euid=0)
    assert account.name == "nobody" and account.uid == 65534 and account.uid != 0


def test_another_caller_runs_them_as_itself() -> None:
    account = run_account(euid=4242)
    assert account.uid == 4242 and account.name  # "uid4242" without a password entry


def test_the_builders_environment_stays_out_of_the_image() -> None:
    env = run_environment(NOBODY, {"NGC_GPU": "none"})
    assert set(env) == {"PATH", "HOME", "USER", "LOGNAME", "NGC_GPU"}
    assert env["USER"] == "nobody" and env["HOME"] == "/nonexistent"


def test_the_command_to_repeat_names_the_user_switch() -> None:
    env = run_environment(NOBODY, {"NGC_GPU": "none", "NGC_BASELINES": "{}"})
    line = person_command(["ch-run", "--", "python"], NOBODY, env)
    words = shlex.split(line)
    assert words[:5] == ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
    assert "NGC_GPU=none" in words and not any(w.startswith("NGC_BASELINES") for w in words)


@as_root
def test_the_scratch_folder_is_only_for_root_and_the_accounts_group(tmp_path: Path) -> None:
    with private_scratch(NOBODY, str(tmp_path)) as folder:
        info = folder.stat()
        assert (info.st_uid, info.st_gid, info.st_mode & 0o777) == (0, 65534, 0o750)
        (folder / "image" / "sub").mkdir(parents=True)
        (folder / "image" / "sub").chmod(0o500)  # unwritable folders go too
    assert not folder.exists()


def test_the_scratch_folder_goes_on_an_error(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), private_scratch(NOBODY, str(tmp_path)) as folder:
        raise RuntimeError("boom")
    assert not folder.exists()


@as_root
def test_a_folder_nobody_cannot_pass_is_named() -> None:
    with tempfile.TemporaryDirectory() as top:  # the system's temporary folder: passable
        Path(top).chmod(0o755)
        closed = Path(top) / "closed"
        (closed / "scratch").mkdir(parents=True)
        closed.chmod(0o700)
        assert unreachable_parent(closed / "scratch", NOBODY) == closed
        closed.chmod(0o755)
        assert unreachable_parent(closed / "scratch", NOBODY) is None


@as_root
def test_processes_run_as_the_account_with_no_groups() -> None:
    done = SubprocessProcesses().run(["sh", "-c", "id -u; id -G; echo $HOME"],
                                     env=run_environment(NOBODY, {}), timeout=30,
                                     account=NOBODY)
    assert done.status == 0 and done.stdout.split() == ["65534", "65534", "/nonexistent"]


def test_a_missing_program_is_tool_missing() -> None:
    with pytest.raises(ToolMissing, match="no-such-ch-run"):
        SubprocessProcesses().run(["no-such-ch-run"], env={}, timeout=5)


def test_a_program_past_its_time_is_killed_with_its_children(tmp_path: Path) -> None:
    marker = tmp_path / "child-ran"
    started = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        SubprocessProcesses().run(["sh", "-c", f"(sleep 2; touch {marker}) & sleep 30"],
                                  env={"PATH": "/usr/bin:/bin"}, timeout=0.5)
    assert time.monotonic() - started < 5
    time.sleep(2.5)
    assert not marker.exists()  # the whole group went, not just sh
