"""Registry credentials the way Docker keeps them: users give them with `docker login`, and
the builder reads them where the Docker CLI does (`$DOCKER_CONFIG/config.json`, else
`~/.docker/config.json`): a per-registry credential helper (`credHelpers`), the default
credential store (`credsStore`), or the base64 `auth` of `auths`.

A secret is held in memory only; its repr is masked so it can reach no log, record or error.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ngc_builder.files import DATA_LIMIT, read_text


@dataclass(frozen=True)
class Credentials:
    username: str
    secret: str = field(repr=False)  # a password or a token; never printed

    def basic(self) -> str:
        """The value of an `Authorization: Basic` header."""
        pair = f"{self.username}:{self.secret}".encode()
        return "Basic " + base64.b64encode(pair).decode()


class CredentialError(Exception):
    """The Docker config names credentials for a registry that cannot be read."""


def docker_config_file() -> Path:
    folder = os.environ.get("DOCKER_CONFIG") or str(Path.home() / ".docker")
    return Path(folder) / "config.json"


def credentials_for(host: str, config_file: Path | None = None) -> Credentials | None:
    """The credentials `docker login HOST` stored, or None when there are none."""
    config = _read_config(config_file or docker_config_file())
    helper = (config.get("credHelpers") or {}).get(host) or config.get("credsStore")
    if helper:
        found = _from_helper(str(helper), host)
        if found is not None:
            return found
    return _from_auths(config.get("auths") or {}, host)


def _read_config(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(read_text(path, DATA_LIMIT))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise CredentialError(f"{path}: unreadable Docker config ({exc})") from None
    return data if isinstance(data, dict) else {}


def _keys_for(host: str) -> list[str]:
    # `docker login` keys entries by host[:port]; old clients wrote a URL.
    return [host, f"https://{host}", f"http://{host}", f"https://{host}/v1/", f"https://{host}/v2/"]


def _from_auths(auths: dict[str, Any], host: str) -> Credentials | None:
    entry = next((auths[key] for key in _keys_for(host) if key in auths), None)
    if not isinstance(entry, dict):
        return None
    if entry.get("username") and entry.get("password"):
        return Credentials(str(entry["username"]), str(entry["password"]))
    if not entry.get("auth"):
        return None
    try:
        username, _, secret = base64.b64decode(str(entry["auth"])).decode().partition(":")
    except (binascii.Error, UnicodeDecodeError):
        raise CredentialError(f"{docker_config_file()}: the auth of {host} is not "
                              "base64 of user:password") from None
    return Credentials(username, secret)


def _from_helper(helper: str, host: str) -> Credentials | None:
    """`docker-credential-<helper> get`, as the Docker CLI asks it (host on stdin)."""
    program = f"docker-credential-{helper}"
    try:
        done = subprocess.run([program, "get"], input=host, capture_output=True, text=True,
                              check=False, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CredentialError(f"credential helper {program} for {host}: {exc}") from None
    if done.returncode != 0:
        return None  # helpers answer "credentials not found" with a non-zero exit
    try:
        answer = json.loads(done.stdout)
    except ValueError:
        raise CredentialError(f"credential helper {program} answered no JSON for {host}"
                              ) from None
    return Credentials(str(answer.get("Username", "")), str(answer.get("Secret", "")))
