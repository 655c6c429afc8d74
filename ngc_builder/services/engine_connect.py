"""A docker-py client for one engine URL: unix://, tcp:// (with a site's TLS folder) or ssh://.

With TLS the client trusts the site's CA only. requests lets REQUESTS_CA_BUNDLE (a proxy's
trust on many build machines) override a session's CA at every request, so the API version is
asked here with the site's files and the client reads no environment.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import docker
import docker.tls
import requests


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
                             verify=str(tls / "ca.pem"), timeout=min(timeout, 60))
        answer.raise_for_status()
        return str(answer.json()["ApiVersion"])
