"""An engine that cannot even be asked says why: a site entry's (or DOCKER_HOST's) port out of
range was an internal error (docker-py's bare ValueError), and a TLS folder that is not there
read as "no Docker engine answers"."""

from __future__ import annotations

from pathlib import Path

import pytest

from ngc_builder.commands.check_host import this_host
from ngc_builder.commands.guard import EXIT_FAILED, guarded
from ngc_builder.errors import EngineError, EngineSetupError
from ngc_builder.services.engine import DockerEngine, connect
from ngc_builder.services.engine_connect import env_tls_problem, url_problem

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("url", "problem"), [
    ("tcp://127.0.0.1:99999", "port 99999 is out of range (1-65535)"),
    ("tcp://builder-2.example:0", "port 0 is out of range (1-65535)"),
    ("ssh://builder@builder-3.example:70000", "port 70000 is out of range (1-65535)"),
    ("tcp://h:" + "9" * 5000, "port 999999999999 is out of range (1-65535)"),
    ("tcp://[::1:2376", "not an engine URL (Invalid IPv6 URL)"),
    ("tcp://builder-2.example:2376", None), ("ssh://builder@builder-3.example", None),
    ("unix:///var/run/docker.sock", None),
])
def test_an_engine_url_docker_py_cannot_take_is_named(url: str, problem: str | None) -> None:
    assert url_problem(url) == problem


def test_an_engine_port_out_of_range_is_one_line_not_an_internal_error() -> None:
    with pytest.raises(EngineSetupError) as raised:
        DockerEngine(5, url="tcp://127.0.0.1:99999", name="builder-2").ping()
    assert str(raised.value) == ("the Docker engine at builder-2 (tcp://127.0.0.1:99999): "
                                 "port 99999 is out of range (1-65535)")


def test_docker_cert_path_missing_is_named_with_its_variable(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("DOCKER_HOST", "tcp://127.0.0.1:2376")
    monkeypatch.setenv("DOCKER_TLS_VERIFY", "1")
    monkeypatch.setenv("DOCKER_CERT_PATH", str(tmp_path / "certs"))

    def ask() -> int:
        connect(timeout=5)
        return 0

    assert guarded(ask) == EXIT_FAILED
    assert capsys.readouterr().err == (
        f"error: the Docker engine at tcp://127.0.0.1:2376 (DOCKER_HOST): its TLS folder "
        f"{tmp_path / 'certs'} does not exist (DOCKER_CERT_PATH)\n")
    # check-host asks the engine only for its runtimes: the finding names the folder
    assert "DOCKER_CERT_PATH" in str(this_host().engine.error)


def test_docker_py_s_rule_for_the_tls_folder(tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """TLS when DOCKER_CERT_PATH is set or DOCKER_TLS_VERIFY is not empty; the CA only when
    verifying; without DOCKER_CERT_PATH, ~/.docker (a home of the test's: this machine's
    own ~/.docker must not decide it)."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert env_tls_problem({}) is None and env_tls_problem({"DOCKER_TLS_VERIFY": ""}) is None
    for name in ("cert.pem", "key.pem"):
        (tmp_path / name).write_text("x")
    assert env_tls_problem({"DOCKER_CERT_PATH": str(tmp_path)}) is None
    assert env_tls_problem({"DOCKER_CERT_PATH": str(tmp_path), "DOCKER_TLS_VERIFY": "1"}) == (
        f"its TLS folder {tmp_path} lacks ca.pem (DOCKER_CERT_PATH)")
    home = str(env_tls_problem({"DOCKER_TLS_VERIFY": "1"}))
    assert f"{Path.home() / '.docker'}" in home and "DOCKER_CERT_PATH unset" in home


def test_an_engine_that_does_not_answer_is_still_said_so(tmp_path: Path) -> None:
    engine = DockerEngine(5, url=f"unix://{tmp_path / 'none.sock'}", name="builder-1")
    with pytest.raises(EngineError, match="no Docker engine answers at builder-1"):
        engine.ping()
