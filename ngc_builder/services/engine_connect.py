"""What docker-py would fail on without naming it: an engine URL it cannot parse (a bare
ValueError), DOCKER_HOST's TLS folder without its files (the engine then looks as if it did not
answer)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

TLS_FILES = ("ca.pem", "cert.pem", "key.pem")  # DOCKER_CERT_PATH's layout
_PORT = re.compile(r":([0-9]+)$")


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
