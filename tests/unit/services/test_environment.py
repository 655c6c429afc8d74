"""Every environment variable the builder reads is checked before a command does anything:
a typo is one line naming the variable and what it accepts, exit 2, never a weaker check."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ngc_builder.commands.guard import EXIT_INPUT, guarded
from ngc_builder.redact import RedactedStream
from ngc_builder.services.environment import (
    VARIABLES,
    setting,
    setting_flag,
    setting_float,
    setting_int,
)
from tests.conftest import REPO

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("name", "value", "line"), [
    ("NGC_GPU", "requried", "NGC_GPU: 'requried' is not auto, required or none"),
    ("NGC_RETRIES", "five", "NGC_RETRIES: 'five' is not a whole number of attempts from 1 to 100"),
    ("NGC_RETRIES", "0", "NGC_RETRIES: '0' is not a whole number of attempts from 1 to 100"),
    ("NGC_RETRY_WAIT", "-1", "NGC_RETRY_WAIT: '-1' is not seconds from 0 to 600"),
    ("NGC_RETRY_WAIT", "nan", "NGC_RETRY_WAIT: 'nan' is not seconds from 0 to 600"),
    ("NGC_PUSH_WITH", "API", "NGC_PUSH_WITH: 'API' is not engine or api"),
    ("NGC_CACHE_PORT", "99999", "NGC_CACHE_PORT: '99999' is not a TCP port from 1 to 65535"),
    ("NGC_PULL_MBPS", "1e400", "NGC_PULL_MBPS: '1e400' is not megabits per second from 1 to "
     "1000000"),
    ("NGC_REGISTRY_INSECURE", "yes", "NGC_REGISTRY_INSECURE: 'yes' is not 0 or 1"),
    ("NGC_DEBIAN_MIRROR", "ftp://u:secret@m.example/debian",
     "NGC_DEBIAN_MIRROR: 'ftp://m.example/debian' is not an http:// or https:// URL"),
    ("NGC_SITE", "site.yaml\non: push", "NGC_SITE: 'site.yaml\\non: push' is not a file"),
    ("NGC_STATE_DIR", "state", "NGC_STATE_DIR: 'state' is not an absolute folder path"),
])
def test_a_bad_value_is_one_line_naming_the_variable_and_nothing_runs(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], name: str,
        value: str, line: str) -> None:
    monkeypatch.setenv(name, value)
    ran: list[bool] = []

    def action() -> int:
        ran.append(True)
        return 0

    assert guarded(action) == EXIT_INPUT
    assert capsys.readouterr().err == line + "\n"
    assert ran == []


def test_good_values_are_read_typed_and_unset_or_empty_is_the_default(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NGC_RETRIES", "3")
    monkeypatch.setenv("NGC_RETRY_WAIT", "0.5")
    monkeypatch.setenv("NGC_REGISTRY_INSECURE", "1")
    monkeypatch.setenv("NGC_GPU", "")
    monkeypatch.delenv("NGC_CACHE_PORT", raising=False)
    assert (setting_int("NGC_RETRIES", 5), setting_float("NGC_RETRY_WAIT", 1.0)) == (3, 0.5)
    assert setting_flag("NGC_REGISTRY_INSECURE") is True
    assert (setting("NGC_GPU"), setting_int("NGC_CACHE_PORT", 3149)) == (None, 3149)


def test_every_variable_the_builder_reads_is_in_the_table() -> None:
    """The runner reads its own (it ships into images, stdlib only); all else goes through
    services/environment.py, so a new variable cannot skip the check."""
    read = re.compile(r"(?:environ\.get\(|environ\[|getenv\()\s*[\"'](NGC_[A-Z_]+)")
    found = {(path.relative_to(REPO).as_posix(), name)
             for path in (REPO / "ngc_builder").rglob("*.py")
             if "runner" not in path.parts for name in read.findall(path.read_text())}
    assert found == {("ngc_builder/commands/guard.py", "NGC_DEBUG")}  # read after the check
    assert "NGC_DEBUG" in VARIABLES


def test_a_url_split_over_two_writes_is_still_redacted() -> None:
    class Sink:
        text = ""

        def write(self, text: str) -> int:
            self.text += text
            return len(text)

        def flush(self) -> None:
            pass

    sink = Sink()
    stream = RedactedStream(sink)  # type: ignore[arg-type]
    stream.write("pulling https://robot:to")
    stream.write("ken@tail@reg.example/x\nhttps://u:p@h")
    assert sink.text == "pulling https://reg.example/x\n"
    stream.flush()
    assert sink.text.endswith("https://h")


def test_a_relative_xdg_folder_is_ignored_as_the_xdg_spec_says(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A relative XDG_STATE_HOME would put a non-root user's made signing key in the folder
    the command ran from (a checkout): ignored, the default taken."""
    from ngc_builder.services.environment import xdg_home

    monkeypatch.setenv("XDG_STATE_HOME", "state")
    assert xdg_home("XDG_STATE_HOME", tmp_path / "default") == tmp_path / "default"
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "abs"))
    assert xdg_home("XDG_STATE_HOME", tmp_path / "default") == tmp_path / "abs"
