"""Real registries for the tests: Debian's distribution registry started with htpasswd behind
TLS (a CA made here and installed the Docker way, in certs.d), or with token auth and a small
token issuer run by the tests (JWTs signed with a test key the registry trusts)."""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import json
import secrets
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar
from urllib.parse import parse_qs, urlparse

import bcrypt
import jwt
import requests
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID

USER, PASSWORD = "release-bot", "pw-" + secrets.token_hex(8)
CERTS_D = Path("/etc/docker/certs.d")


@dataclass(frozen=True)
class RunningRegistry:
    host: str  # 127.0.0.1:<port>
    scheme: str


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _cert(subject: str, key: rsa.RSAPrivateKey, issuer: tuple[str, rsa.RSAPrivateKey] | None,
          ca: bool) -> x509.Certificate:
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
    issuer_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer[0])]) \
        if issuer else name
    now = dt.datetime.now(dt.UTC)
    builder = (x509.CertificateBuilder().subject_name(name).issuer_name(issuer_name)
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now - dt.timedelta(minutes=5))
               .not_valid_after(now + dt.timedelta(days=1))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if not ca:
        import ipaddress
        builder = builder.add_extension(x509.SubjectAlternativeName(
            [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
    return builder.sign(issuer[1] if issuer else key, hashes.SHA256())


def _pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _key_pem(key: rsa.RSAPrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


@contextlib.contextmanager
def _running(config: Path, url: str, log: Path, verify: str | bool = True) -> Iterator[None]:
    process = _serve(config, url, log, verify)
    try:
        yield
    finally:
        process.kill()
        process.wait()


def _serve(config: Path, url: str, log: Path, verify: str | bool) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(["docker-registry", "serve", str(config)],
                               stdout=log.open("ab"), stderr=subprocess.STDOUT)
    for _ in range(100):
        with contextlib.suppress(requests.RequestException):
            if requests.get(url, timeout=2, verify=verify).status_code == 401:
                return process
        time.sleep(0.1)
    process.kill()
    raise RuntimeError(f"test registry did not start: {log.read_text()[-2000:]}")


def _config(folder: Path, port: int, auth: dict[str, object], tls: dict[str, str] | None) -> Path:
    http: dict[str, object] = {"addr": f"127.0.0.1:{port}"}
    if tls:
        http["tls"] = tls
    config = {"version": 0.1, "log": {"level": "info"},
              "storage": {"filesystem": {"rootdirectory": str(folder / "data")},
                          "delete": {"enabled": True}},
              "http": http, "auth": auth}
    path = folder / "config.yml"
    path.write_text(json.dumps(config))  # YAML is a superset of JSON
    return path


def _htpasswd(folder: Path) -> dict[str, object]:
    hashed = bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(rounds=5)).decode()
    (folder / "htpasswd").write_text(f"{USER}:{hashed}\n")
    return {"htpasswd": {"realm": "ngc-test", "path": str(folder / "htpasswd")}}


@contextlib.contextmanager
def htpasswd_registry(folder: Path, port: int) -> Iterator[RunningRegistry]:
    """What Debian's packaged docker-registry service serves: htpasswd, plain HTTP."""
    config = _config(folder, port, _htpasswd(folder), None)
    with _running(config, f"http://127.0.0.1:{port}/v2/", folder / "registry.log"):
        yield RunningRegistry(f"127.0.0.1:{port}", "http")


@contextlib.contextmanager
def htpasswd_tls_registry(folder: Path) -> Iterator[RunningRegistry]:
    """htpasswd auth behind TLS; its CA in /etc/docker/certs.d/<host>/ca.crt, as Docker reads
    it (the engine and the builder both)."""
    port = free_port()
    host = f"127.0.0.1:{port}"
    ca_key, server_key = _key(), _key()
    ca = _cert("ngc test CA", ca_key, None, ca=True)
    server = _cert("127.0.0.1", server_key, ("ngc test CA", ca_key), ca=False)
    (folder / "server.crt").write_bytes(_pem(server))
    (folder / "server.key").write_bytes(_key_pem(server_key))
    config = _config(folder, port, _htpasswd(folder),
                     {"certificate": str(folder / "server.crt"),
                      "key": str(folder / "server.key")})
    certs = CERTS_D / host
    certs.mkdir(parents=True, exist_ok=True)
    (certs / "ca.crt").write_bytes(_pem(ca))
    try:
        with _running(config, f"https://{host}/v2/", folder / "registry.log",
                      str(certs / "ca.crt")):
            yield RunningRegistry(host, "https")
    finally:
        shutil.rmtree(certs, ignore_errors=True)


class TokenIssuer(BaseHTTPRequestHandler):
    """GET /token?service=..&scope=..: a JWT granting every asked action, for USER only."""

    key: ClassVar[rsa.RSAPrivateKey]
    cert: ClassVar[x509.Certificate]
    issued: ClassVar[list[str]] = []

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        expected = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
        if self.headers.get("Authorization") != expected:
            self.send_response(401)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        query = parse_qs(urlparse(self.path).query)
        scopes = [s for value in query.get("scope", []) for s in value.split(" ")]
        self.issued.extend(scopes)
        body = json.dumps({"token": self._token(query.get("service", [""])[0], scopes),
                           "expires_in": 300}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _token(self, service: str, scopes: list[str]) -> str:
        access = []
        for scope in scopes:
            kind, _, rest = scope.partition(":")
            name, _, actions = rest.rpartition(":")
            access.append({"type": kind, "name": name, "actions": actions.split(",")})
        now = int(time.time())
        claims = {"iss": "ngc-test-issuer", "sub": USER, "aud": service, "iat": now,
                  "nbf": now - 10, "exp": now + 300, "jti": secrets.token_hex(8),
                  "access": access}
        chain = [base64.b64encode(self.cert.public_bytes(serialization.Encoding.DER)).decode()]
        return jwt.encode(claims, self.key, algorithm="RS256", headers={"x5c": chain})


@contextlib.contextmanager
def token_registry(folder: Path) -> Iterator[RunningRegistry]:
    """`auth: token` with the issuer above (plain HTTP on loopback, as Docker allows)."""
    TokenIssuer.key = _key()
    TokenIssuer.cert = _cert("ngc test issuer", TokenIssuer.key, None, ca=True)
    TokenIssuer.issued = []
    (folder / "issuer.crt").write_bytes(_pem(TokenIssuer.cert))
    issuer = ThreadingHTTPServer(("127.0.0.1", 0), TokenIssuer)
    threading.Thread(target=issuer.serve_forever, daemon=True).start()
    port = free_port()
    realm = f"http://127.0.0.1:{issuer.server_address[1]}/token"
    config = _config(folder, port, {"token": {
        "realm": realm, "service": "ngc-test", "issuer": "ngc-test-issuer",
        "rootcertbundle": str(folder / "issuer.crt")}}, None)
    try:
        with _running(config, f"http://127.0.0.1:{port}/v2/", folder / "registry.log"):
            yield RunningRegistry(f"127.0.0.1:{port}", "http")
    finally:
        issuer.shutdown()
        issuer.server_close()


def docker_config(folder: Path, host: str) -> Path:
    """A Docker config folder holding the test user's login to `host`, as `docker login`
    writes it."""
    folder.mkdir()
    auth = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    (folder / "config.json").write_text(json.dumps({"auths": {host: {"auth": auth}}}))
    return folder
