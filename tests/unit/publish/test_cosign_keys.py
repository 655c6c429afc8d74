"""The signing key in cosign's encrypted format, where it comes from, and what a bad one
says: one line naming where it came from, and never the password."""

from __future__ import annotations

import base64
import json
import time
from pathlib import Path

import pytest

from ngc_builder.commands.guard import EXIT_INPUT, guarded
from ngc_builder.errors import InputError
from ngc_builder.publish.cosign_keys import (
    KEY_FILE,
    PUBLIC_FILE,
    decrypt,
    signing_key,
    verifies,
    verifying_key,
    write_key_pair,
)

pytestmark = pytest.mark.unit


def test_a_key_pair_round_trips_and_signs(tmp_path: Path) -> None:
    write_key_pair(tmp_path, b"secret")
    key = decrypt((tmp_path / KEY_FILE).read_text(), b"secret", "k")
    assert (tmp_path / KEY_FILE).stat().st_mode & 0o777 == 0o600
    assert (tmp_path / PUBLIC_FILE).read_text().startswith("-----BEGIN PUBLIC KEY-----")
    from ngc_builder.publish.cosign_keys import SigningKey

    signature = SigningKey(key, "k").sign(b"payload")
    assert verifies(key.public_key(), b"payload", signature)
    assert not verifies(key.public_key(), b"other payload", signature)
    assert not verifies(key.public_key(), b"payload", "not base64!")


@pytest.mark.parametrize(("text", "password", "says"), [
    (None, b"wrong", "wrong password (NGC_SIGNING_PASSWORD or COSIGN_PASSWORD)"),
    ("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n", b"",
     "not a cosign private key"),
    ("just text", b"", "not a cosign private key"),
])
def test_a_bad_key_is_one_line_naming_where_it_came_from(
        tmp_path: Path, text: str | None, password: bytes, says: str) -> None:
    write_key_pair(tmp_path, b"right")
    with pytest.raises(InputError) as refused:
        decrypt(text or (tmp_path / KEY_FILE).read_text(), password, "team.key")
    assert str(refused.value).startswith("team.key:1: key: ") and says in str(refused.value)


def test_a_hostile_key_file_cannot_ask_for_a_huge_scrypt(tmp_path: Path) -> None:
    write_key_pair(tmp_path, b"")
    text = (tmp_path / KEY_FILE).read_text()
    body = json.loads(base64.b64decode("".join(text.splitlines()[1:-1])))
    body["kdf"]["params"]["N"] = 1 << 30  # gigabytes and minutes if obeyed
    wrapped = base64.b64encode(json.dumps(body).encode()).decode()
    started = time.monotonic()
    with pytest.raises(InputError, match="not a cosign private key"):
        decrypt(f"-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----\n{wrapped}\n"
                "-----END ENCRYPTED SIGSTORE PRIVATE KEY-----\n", b"", "team.key")
    assert time.monotonic() - started < 5


def test_without_a_configured_key_one_is_made_once(monkeypatch: pytest.MonkeyPatch,
                                                   tmp_path: Path) -> None:
    monkeypatch.setenv("NGC_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.delenv("NGC_SIGNING_KEY", raising=False)
    assert verifying_key()[0] is None  # verify never makes one
    first = signing_key()
    again = signing_key()
    assert first.made_now and not again.made_now
    assert first.public_pem == again.public_pem
    assert (tmp_path / "state" / "signing" / PUBLIC_FILE).read_text() == first.public_pem
    assert verifying_key()[0] is not None


def test_a_key_from_a_ci_secret_and_its_password(monkeypatch: pytest.MonkeyPatch,
                                                 tmp_path: Path) -> None:
    write_key_pair(tmp_path, b"ci-password")
    monkeypatch.setenv("RELEASE_KEY", (tmp_path / KEY_FILE).read_text())
    monkeypatch.setenv("NGC_SIGNING_KEY", "env://RELEASE_KEY")
    monkeypatch.setenv("COSIGN_PASSWORD", "ci-password")
    assert signing_key().public_pem == (tmp_path / PUBLIC_FILE).read_text()
    monkeypatch.setenv("NGC_SIGNING_KEY", "env://NOT_SET_ANYWHERE")
    with pytest.raises(InputError, match=r"\$NOT_SET_ANYWHERE is empty"):
        signing_key()


def test_the_password_is_never_shown(monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("NGC_SIGNING_PASSWORD", "hunter2\x01")  # any value is a password
    monkeypatch.setenv("NGC_SIGNING_KEY", "env://has space")
    assert guarded(lambda: 0) == EXIT_INPUT
    err = capsys.readouterr().err
    assert "hunter2" not in err and err.startswith("NGC_SIGNING_KEY: 'env://has space' is not")
