"""What a registry call can fail with, and the HTTP answers that mean it."""

from __future__ import annotations

import requests


class RegistryError(Exception):
    """The registry could not be reached or answered with an error."""


class RegistryAuthError(RegistryError):
    """The registry wants credentials (HTTP 401/403)."""


class RegistryUnavailable(RegistryError):
    """The registry could not answer now: a lost or refused connection, HTTP 429 or 5xx."""


def raise_for(response: requests.Response, url: str) -> None:
    if response.status_code in (401, 403):
        raise RegistryAuthError(f"{url}: HTTP {response.status_code} (credentials needed)")
    if response.status_code >= 400:
        raise RegistryError(f"{url}: HTTP {response.status_code}")
