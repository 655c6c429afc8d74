"""Trust for a registry the Docker way: the CA files of `/etc/docker/certs.d/<host[:port]>/`
(`*.crt`) on top of the system's store, and a client certificate there (`client.cert` +
`client.key`) when the registry asks for one. The engine reads the same folder."""

from __future__ import annotations

import hashlib
import ssl
from pathlib import Path

import requests.utils

from ngc_builder.files import DATA_LIMIT, INPUT_LIMIT, read_text, write_atomic
from ngc_builder.services.environment import setting, xdg_home

CERTS_D = Path("/etc/docker/certs.d")


def certs_dir(host: str) -> Path:
    return Path(setting("NGC_DOCKER_CERTS_D") or CERTS_D) / host


def has_own_ca(host: str) -> bool:
    return any(certs_dir(host).glob("*.crt"))


def verify_for(host: str) -> str | bool:
    """What requests verifies the registry with: the system store, plus its certs.d CAs."""
    extra = sorted(certs_dir(host).glob("*.crt"))
    if not extra:
        return True
    system = ssl.get_default_verify_paths().cafile or requests.utils.DEFAULT_CA_BUNDLE_PATH
    bundle = read_text(Path(system), DATA_LIMIT) if Path(system).is_file() else ""
    bundle += "".join("\n" + read_text(path, INPUT_LIMIT) for path in extra)
    digest = hashlib.sha256(bundle.encode()).hexdigest()[:16]
    cache = xdg_home("XDG_CACHE_HOME", Path.home() / ".cache")
    target = cache / "ngc-builder" / "ca" / f"{digest}.pem"
    if not target.exists():
        write_atomic(target, bundle)
    return str(target)


def client_cert_for(host: str) -> tuple[str, str] | None:
    folder = certs_dir(host)
    cert, key = folder / "client.cert", folder / "client.key"
    return (str(cert), str(key)) if cert.is_file() and key.is_file() else None
