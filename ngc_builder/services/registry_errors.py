"""What a registry call can fail with, and the HTTP answers that mean it."""

from __future__ import annotations

from typing import Protocol


class RegistryError(Exception):
    """The registry could not be reached or answered with an error."""


class RegistryAuthError(RegistryError):
    """The registry wants credentials (HTTP 401/403)."""


class RegistryUnavailable(RegistryError):
    """The registry could not answer now: a lost or refused connection, HTTP 429 or 5xx."""


class Answered(Protocol):
    @property
    def status_code(self) -> int: ...


def raise_for(response: Answered, url: str) -> None:
    """An error for an answer that is not a success. A redirect reaching here is one not
    followed (registry_http.py: a PUT or POST told to go elsewhere): not a success either."""
    if response.status_code in (401, 403):
        raise RegistryAuthError(f"{url}: HTTP {response.status_code} (credentials needed)")
    if response.status_code >= 300:
        raise RegistryError(f"{url}: HTTP {response.status_code}")
