"""The release's signing key, in cosign's own encrypted format, so a team's existing cosign key
works and `cosign verify --key` checks what we sign.

cosign's private key file is PEM (`ENCRYPTED SIGSTORE PRIVATE KEY`, or the older `ENCRYPTED
COSIGN PRIVATE KEY`) around JSON: the key's PKCS#8 DER sealed with NaCl's secretbox under a
key derived by scrypt from the password. We read and write exactly that (PyNaCl for the
secretbox, `cryptography` for ECDSA P-256); no cosign binary is needed to sign.

Where the key comes from, in order: NGC_SIGNING_KEY (a file, or `env://VARIABLE` for a CI
secret) with its password in NGC_SIGNING_PASSWORD or COSIGN_PASSWORD; else a key pair the
builder made once in its state folder (empty password, mode 0600), said once when made. A
key file is read only when it is this user's alone (publish/key_files.py): one others can
read, a link, a FIFO or a device is refused in one line, never used.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from nacl.exceptions import CryptoError
from nacl.secret import SecretBox

from ngc_builder.errors import InputError, Problem
from ngc_builder.files import INPUT_LIMIT, read_text, write_atomic, write_private
from ngc_builder.publish.key_files import KEY_FILE as KEY_FILE
from ngc_builder.publish.key_files import PUBLIC_FILE as PUBLIC_FILE
from ngc_builder.publish.key_files import key_folder, read_key_file
from ngc_builder.services.environment import setting

PEM_LABELS = ("ENCRYPTED SIGSTORE PRIVATE KEY", "ENCRYPTED COSIGN PRIVATE KEY")
SCRYPT = {"N": 65536, "r": 8, "p": 1}  # what `cosign generate-key-pair` uses


@dataclass(frozen=True)
class SigningKey:
    private: ec.EllipticCurvePrivateKey
    source: str  # where it came from, for messages (never its contents)
    made_now: bool = False

    @property
    def public_pem(self) -> str:
        return public_pem(self.private.public_key())

    def sign(self, payload: bytes) -> str:
        """ECDSA P-256 over SHA-256, base64 DER: a cosign signature annotation."""
        return base64.b64encode(self.private.sign(payload, ec.ECDSA(hashes.SHA256()))).decode()


def public_pem(key: ec.EllipticCurvePublicKey) -> str:
    return key.public_bytes(serialization.Encoding.PEM,
                            serialization.PublicFormat.SubjectPublicKeyInfo).decode()


def key_id(public: str) -> str:
    """A short name of a public key: the sha256 of its PEM, as it goes beside the notes."""
    return hashlib.sha256(public.encode()).hexdigest()[:16]


def load_public(text: str, where: str) -> ec.EllipticCurvePublicKey:
    try:
        key = serialization.load_pem_public_key(text.encode())
    except ValueError:
        raise InputError([Problem(where, 1, "key", "not a PEM public key")]) from None
    if not isinstance(key, ec.EllipticCurvePublicKey):
        raise InputError([Problem(where, 1, "key", "not an ECDSA public key")])
    return key


def read_public_key(path: Path) -> ec.EllipticCurvePublicKey:
    """The public key a command was given (`--key`): anyone's file to read, never a FIFO."""
    try:
        text = read_text(path, INPUT_LIMIT)
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError([Problem(str(path), 1, "--key", getattr(exc, "strerror", None)
                                  or "not a text file")]) from None
    return load_public(text, str(path))


def verifies(public: ec.EllipticCurvePublicKey, payload: bytes, signature: str) -> bool:
    try:
        public.verify(base64.b64decode(signature, validate=True), payload,
                      ec.ECDSA(hashes.SHA256()))
    except (InvalidSignature, ValueError):
        return False
    return True


def signing_key() -> SigningKey:
    """The configured key, else the builder's own (made once)."""
    configured = setting("NGC_SIGNING_KEY")
    password = (setting("NGC_SIGNING_PASSWORD") or os.environ.get("COSIGN_PASSWORD")
                or "").encode()
    if configured:
        text, where = _key_text(configured)
        return SigningKey(decrypt(text, password, where), where)
    own = key_folder() / KEY_FILE
    if not own.exists() and not own.is_symlink():  # a link there is refused, not replaced
        text = write_key_pair(own.parent, b"")
        return SigningKey(decrypt(text, b"", str(own)), str(own), made_now=True)
    return SigningKey(decrypt(read_key_file(own), password, str(own)), str(own))


def _key_text(configured: str) -> tuple[str, str]:
    if configured.startswith("env://"):
        name = configured.removeprefix("env://")
        text = os.environ.get(name)
        if not text:
            raise InputError([Problem("NGC_SIGNING_KEY", 0, "key", f"${name} is empty")])
        return text, f"${name}"
    return read_key_file(Path(configured)), configured


def decrypt(text: str, password: bytes, where: str) -> ec.EllipticCurvePrivateKey:
    """cosign's encrypted private key -> the key; InputError naming `where` otherwise."""
    try:
        sealed = json.loads(base64.b64decode(_pem_body(text, where)))
        params = sealed["kdf"]["params"]
        box = SecretBox(_derive(password, base64.b64decode(sealed["kdf"]["salt"]), params))
        der = box.decrypt(base64.b64decode(sealed["ciphertext"]),
                          base64.b64decode(sealed["cipher"]["nonce"]))
        key = serialization.load_der_private_key(der, None)
    except CryptoError:
        raise InputError([Problem(where, 1, "key", "wrong password (NGC_SIGNING_PASSWORD or "
                                  "COSIGN_PASSWORD)")]) from None
    except (ValueError, KeyError, TypeError):
        raise InputError([Problem(where, 1, "key", "not a cosign private key")]) from None
    if not isinstance(key, ec.EllipticCurvePrivateKey):
        raise InputError([Problem(where, 1, "key", "not an ECDSA key")])
    return key


def encrypt(key: ec.EllipticCurvePrivateKey, password: bytes) -> str:
    salt, nonce = secrets.token_bytes(32), secrets.token_bytes(SecretBox.NONCE_SIZE)
    der = key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    sealed = SecretBox(_derive(password, salt, SCRYPT)).encrypt(der, nonce).ciphertext
    body = json.dumps({"kdf": {"name": "scrypt", "params": SCRYPT,
                               "salt": base64.b64encode(salt).decode()},
                       "cipher": {"name": "nacl/secretbox",
                                  "nonce": base64.b64encode(nonce).decode()},
                       "ciphertext": base64.b64encode(sealed).decode()})
    lines = base64.encodebytes(body.encode()).decode().replace("\n", "")
    wrapped = "\n".join(lines[i:i + 64] for i in range(0, len(lines), 64))
    return f"-----BEGIN {PEM_LABELS[0]}-----\n{wrapped}\n-----END {PEM_LABELS[0]}-----\n"


def write_key_pair(folder: Path, password: bytes) -> str:
    """A new pair in `folder` (the private key 0600, never written through a link); the
    private key's text."""
    key = ec.generate_private_key(ec.SECP256R1())
    text = encrypt(key, password)
    write_private(folder / KEY_FILE, text.encode())
    write_atomic(folder / PUBLIC_FILE, public_pem(key.public_key()))
    return text


def _derive(password: bytes, salt: bytes, params: dict[str, int]) -> bytes:
    n, r, p = int(params["N"]), int(params["r"]), int(params["p"])
    if not (2 <= n <= 1 << 20 and 1 <= r <= 16 and 1 <= p <= 4):  # a hostile file's cost
        raise ValueError("scrypt parameters out of bounds")
    return hashlib.scrypt(password, salt=salt, n=n, r=r, p=p, maxmem=256 << 20, dklen=32)


def _pem_body(text: str, where: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines()]
    if len(lines) < 3 or lines[0] not in {f"-----BEGIN {label}-----" for label in PEM_LABELS}:
        raise InputError([Problem(where, 1, "key", "not a cosign private key (PEM "
                                  f"{PEM_LABELS[0]})")])
    return "".join(lines[1:-1])


def verifying_key() -> tuple[ec.EllipticCurvePublicKey | None, str]:
    """The public key `verify` checks signatures with: the configured signing key's, else
    the builder's own (never made here); None and where it was looked for otherwise."""
    if setting("NGC_SIGNING_KEY"):
        key = signing_key()
        return key.private.public_key(), key.source
    public = key_folder() / PUBLIC_FILE
    if not public.exists() and not public.is_symlink():
        return None, f"NGC_SIGNING_KEY, or {public}"
    return load_public(read_key_file(public, public=True), str(public)), str(public)
