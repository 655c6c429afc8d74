"""How a registry call proves who it is: the registry's 401 names the scheme (the
`WWW-Authenticate` challenge). Basic: the Docker credentials on every call. Bearer (the
distribution token spec): a token for the call's scope from the challenge's realm, asked with
the Docker credentials (or anonymously), cached until it expires.
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass, field

import requests

from ngc_builder.services.credentials import CredentialError, Credentials, credentials_for
from ngc_builder.services.registry_errors import RegistryError
from ngc_builder.services.registry_http import TOKEN, Answer, fetch

_PARAM = re.compile(r'([a-zA-Z_]+)="([^"]*)"')
TOKEN_MARGIN = 10.0  # seconds: a token about to expire is asked for again


class AuthError(Exception):
    """Credentials are missing, rejected, or a token could not be had."""


@dataclass(frozen=True)
class Challenge:
    scheme: str  # "basic" or "bearer"
    params: dict[str, str]


def parse_challenge(header: str) -> Challenge | None:
    scheme, _, rest = header.strip().partition(" ")
    if not scheme:
        return None
    return Challenge(scheme.lower(), dict(_PARAM.findall(rest)))


def scope_for(repository: str, write: bool) -> str:
    return f"repository:{repository}:{'pull,push' if write else 'pull'}"


@dataclass
class RegistryAuth:
    """The authorization of one registry host, shared by the threads of a run."""

    host: str
    _credentials: Credentials | None = None
    _looked_up: bool = False
    _basic: bool = False
    _tokens: dict[str, tuple[str, float]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def credentials(self) -> Credentials | None:
        with self._lock:
            if not self._looked_up:
                try:
                    self._credentials = credentials_for(self.host)
                except CredentialError as exc:
                    raise AuthError(str(exc)) from None
                self._looked_up = True
            return self._credentials

    def headers(self, scope: str) -> dict[str, str]:
        """What to send with a call in `scope`, from what earlier challenges taught."""
        credentials = self.credentials() if self._basic else None
        if credentials is not None:
            return {"Authorization": credentials.basic()}
        with self._lock:
            token, expires = self._tokens.get(scope, ("", 0.0))
        return {"Authorization": f"Bearer {token}"} if token and expires > time.time() else {}

    def answer(self, challenge_header: str, scope: str, session: requests.Session,
               timeout: float) -> None:
        """Learn from a 401 so that the call can be made again; AuthError when it cannot."""
        challenge = parse_challenge(challenge_header)
        if challenge is None or challenge.scheme not in ("basic", "bearer"):
            raise AuthError(f"{self.host} asks for credentials in a way not supported "
                            f"({challenge_header or 'no WWW-Authenticate'})")
        if challenge.scheme == "basic":
            if self.credentials() is None:
                raise AuthError(self._no_credentials())
            self._basic = True
            return
        token, lifetime = self._fetch_token(challenge, scope, session, timeout)
        with self._lock:
            self._tokens[scope] = (token, time.time() + lifetime - TOKEN_MARGIN)

    def _fetch_token(self, challenge: Challenge, scope: str, session: requests.Session,
                     timeout: float) -> tuple[str, float]:
        realm = challenge.params.get("realm")
        if not realm:
            raise AuthError(f"{self.host}: a Bearer challenge without a realm")
        # Several scopes (a mount reads one repository, writes another): one parameter each.
        query = {"service": challenge.params.get("service", ""), "scope": scope.split()}
        credentials = self.credentials()
        auth = (credentials.username, credentials.secret) if credentials else None
        try:  # the answer bounded as the registry's own: the realm is the registry's word
            answer = fetch(session, "GET", realm, {}, TOKEN, timeout=timeout, auth=auth,
                           params=query)
        except requests.RequestException as exc:
            raise AuthError(f"token service of {self.host}: {exc.__class__.__name__}") from None
        except RegistryError as exc:
            raise AuthError(f"token service of {self.host}: {exc}") from None
        if answer.status_code in (401, 403):
            raise AuthError(self._rejected() if credentials else self._no_credentials())
        if answer.status_code >= 400:
            raise AuthError(f"token service of {self.host}: HTTP {answer.status_code}")
        return _token_of(answer, self.host)

    def _no_credentials(self) -> str:
        return f"{self.host} needs credentials: run `docker login {self.host}`"

    def _rejected(self) -> str:
        return (f"{self.host} rejected the credentials of the Docker config: run "
                f"`docker login {self.host}` again")

    def rejected(self) -> str:
        """Why a call that carried credentials still got a 401/403."""
        return self._rejected() if self.credentials() else self._no_credentials()


def _token_of(answer: Answer, host: str) -> tuple[str, float]:
    try:
        body = answer.json()
        token = str(body.get("token") or body.get("access_token") or "")
        lifetime = float(body.get("expires_in") or 60)
    except (ValueError, AttributeError, TypeError):
        raise AuthError(f"token service of {host} answered no token") from None
    if not token:
        raise AuthError(f"token service of {host} answered no token")
    return token, lifetime
