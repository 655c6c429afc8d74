"""Certificates for a dockerd served over tcp with TLS, as `dockerd --tlsverify` and Docker's
own docs set it up: a CA, a server certificate for 127.0.0.1, a client certificate, made with
the openssl CLI in a folder the caller owns (short-lived: two days)."""

from __future__ import annotations

import shutil
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

EC_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]


@dataclass(frozen=True)
class TlsFiles:
    folder: Path

    @property
    def client(self) -> Path:
        """ca.pem, cert.pem, key.pem: DOCKER_CERT_PATH's layout, what a site's `tls:` names."""
        return self.folder / "client"

    def daemon_config(self) -> dict[str, object]:
        return {"tlsverify": True, "tlscacert": str(self.folder / "ca.pem"),
                "tlscert": str(self.folder / "server-cert.pem"),
                "tlskey": str(self.folder / "server-key.pem")}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def make_certs(folder: Path) -> TlsFiles:
    folder.mkdir(parents=True, exist_ok=True)
    _openssl(folder, "req", "-x509", *EC_KEY, "-keyout", "ca-key.pem", "-out", "ca.pem",
             "-days", "2", "-subj", "/CN=ngc-builder test CA")
    _signed(folder, "server", "/CN=127.0.0.1",
            "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
    _signed(folder, "client", "/CN=ngc-builder", "extendedKeyUsage=clientAuth\n")
    files = TlsFiles(folder)
    files.client.mkdir()
    shutil.copy(folder / "ca.pem", files.client / "ca.pem")
    shutil.copy(folder / "client-cert.pem", files.client / "cert.pem")
    shutil.copy(folder / "client-key.pem", files.client / "key.pem")
    return files


def _signed(folder: Path, name: str, subject: str, extensions: str) -> None:
    (folder / f"{name}.ext").write_text(extensions)
    _openssl(folder, "req", "-new", *EC_KEY, "-keyout", f"{name}-key.pem", "-out",
             f"{name}.csr", "-subj", subject)
    _openssl(folder, "x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey",
             "ca-key.pem", "-CAcreateserial", "-out", f"{name}-cert.pem", "-days", "2",
             "-extfile", f"{name}.ext")


def _openssl(folder: Path, *args: str) -> None:
    subprocess.run(["openssl", *args], cwd=folder, check=True, capture_output=True, timeout=60)
