"""A docker-py client for one engine URL: unix://, tcp:// (with a site's TLS folder) or ssh://.

With TLS the client trusts the site's CA only. requests lets REQUESTS_CA_BUNDLE (a proxy's
trust on many build machines) override a session's CA at every request, so the API version is
asked here with the site's files and the client reads no environment.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import docker
import docker.tls
import requests
import urllib3

TLS_FILES = ("ca.pem", "cert.pem", "key.pem")  # DOCKER_CERT_PATH's layout
VERSION_LIMIT = 64 * 1024  # an engine's /version answer: a few hundred bytes
_PORT = re.compile(r":([0-9]+)$")


def client_options(url: str, tls: Path | None, timeout: int) -> dict[str, Any]:
    """docker-py's DockerClient arguments for `url` (tls: the folder's cert files)."""
    options: dict[str, Any] = {"base_url": url, "timeout": timeout}
    if tls is not None:
        options["tls"] = docker.tls.TLSConfig(
            client_cert=(str(tls / "cert.pem"), str(tls / "key.pem")),
            ca_cert=str(tls / "ca.pem"), verify=True)
    if url.startswith("ssh://"):
        options["use_ssh_client"] = True  # the ssh binary and its config; no paramiko
    return options


def connect_client(url: str, tls: Path | None, timeout: int) -> Any:
    """docker-py has no type hints: Any stops here."""
    if tls is None:
        return docker.DockerClient(**client_options(url, tls, timeout))
    client = docker.DockerClient(**client_options(url, tls, timeout),
                                 version=tls_api_version(url, tls, timeout))
    client.api.trust_env = False
    return client


def tls_api_version(url: str, tls: Path, timeout: int) -> str:
    """The engine's API version, asked over TLS with the site's files only."""
    with requests.Session() as session:
        session.trust_env = False
        answer = session.get(url.replace("tcp://", "https://", 1) + "/version",
                             cert=(str(tls / "cert.pem"), str(tls / "key.pem")),
                             verify=str(tls / "ca.pem"), timeout=min(timeout, 60),
                             stream=True)
        with answer:
            answer.raise_for_status()
            # A few hundred bytes from an engine; whatever answers there is read no further.
            try:
                body = answer.raw.read(VERSION_LIMIT + 1, decode_content=True)
            except urllib3.exceptions.HTTPError as exc:  # cut mid-way: a lost connection
                raise requests.ConnectionError(f"{url}/version: {exc}") from None
    try:  # said as requests says a bad answer: the callers name the engine that gave it
        if len(body) > VERSION_LIMIT:
            raise ValueError(f"more than {VERSION_LIMIT} bytes")
        return str(json.loads(body)["ApiVersion"])
    except (ValueError, KeyError, TypeError) as exc:
        raise requests.exceptions.InvalidJSONError(
            f"{url}/version: not an engine's answer ({exc.__class__.__name__})") from None


def url_problem(url: str) -> str | None:
    """What is wrong with a tcp:// or ssh:// engine URL that docker-py would raise as a bare
    ValueError (an internal error): a port out of range, an open bracket. None: it can be
    tried (a unix:// socket path is docker-py's to judge)."""
    if not url.startswith(("tcp://", "ssh://")):
        return None
    authority = url.split("://", 1)[1].split("/", 1)[0].rpartition("@")[2]
    port = _PORT.search(authority)
    if port and (len(port.group(1)) > 5 or not 0 < int(port.group(1)) < 65536):
        return f"port {port.group(1)[:12]} is out of range (1-65535)"
    try:
        _ = urlsplit(url).port  # an open bracket, a port that is not a number: ValueError
    except ValueError as exc:
        return f"not an engine URL ({exc})"
    return None


def tls_problem(folder: Path, files: tuple[str, ...] = TLS_FILES) -> str | None:
    """Why `folder` cannot be the engine's TLS folder (docker-py says only that a certificate
    must be given, and the engine then looked as if it did not answer)."""
    if not folder.is_dir():
        return f"its TLS folder {folder} does not exist"
    missing = [name for name in files if not (folder / name).is_file()]
    return f"its TLS folder {folder} lacks {', '.join(missing)}" if missing else None


def env_tls_problem(environ: Mapping[str, str] = os.environ) -> str | None:
    """The same for the engine of DOCKER_HOST, as docker-py reads the variables: TLS when
    DOCKER_CERT_PATH is set or DOCKER_TLS_VERIFY is (not empty); the files in
    DOCKER_CERT_PATH, else ~/.docker; the CA only to verify with."""
    folder = environ.get("DOCKER_CERT_PATH") or ""
    verify = bool(environ.get("DOCKER_TLS_VERIFY"))
    if not (folder or verify):
        return None
    files = TLS_FILES if verify else TLS_FILES[1:]
    problem = tls_problem(Path(folder or Path.home() / ".docker"), files)
    named = "DOCKER_CERT_PATH" if folder else "DOCKER_TLS_VERIFY, DOCKER_CERT_PATH unset"
    return f"{problem} ({named})" if problem else None
