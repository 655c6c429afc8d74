"""One HTTP exchange with a registry (or its token service), its answer read with a bound.

A registry's answer is hostile input: its body is read only where it is wanted, at most the
bound for what it should be (a manifest, a blob read whole, a token, a tag list), refused as
soon as its Content-Length or the bytes read pass that bound, never read whole first. Any
other body (an error page, a redirect's) is read a little, so the connection can serve the
next call, and dropped. Redirects are followed here, not by requests, which reads each
redirect's body whole and could not be bounded.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urljoin, urlsplit

import requests
import urllib3

from ngc_builder.errors import connection_reason
from ngc_builder.services.registry_errors import RegistryError, RegistryUnavailable
from ngc_builder.services.retry import TRANSIENT_STATUS

CHUNK = 64 * 1024
DISCARD = 64 * 1024  # bytes of an unwanted body read before the connection is dropped
MAX_REDIRECTS = 5
REDIRECTS = (301, 302, 303, 307, 308)
SAME_METHOD_REDIRECTS = (307, 308)  # the only ones that repeat a PUT or POST as it was
Body = bytes | Iterable[bytes] | None


class Sink(Protocol):
    """Where a body too large for memory goes as it arrives (a layer, a SquashFS)."""

    def restart(self) -> None:
        """Forget what was written: the call is being answered again (a retry)."""

    def write(self, chunk: bytes) -> object: ...


@dataclass(frozen=True)
class Bound:
    """The most bytes an answer of this kind may have (and what to call it in an error);
    with a `sink`, the body goes there chunk by chunk instead of into memory."""

    what: str
    size: int
    sink: Sink | None = None

    def __str__(self) -> str:
        mib, rest = divmod(self.size, 1024 * 1024)
        return f"{mib} MiB" if mib and not rest else f"{self.size} bytes"


# The distribution registry itself refuses a manifest over 4 MiB.
MANIFEST = Bound("manifest", 4 * 1024 * 1024)
# Blobs read whole: image configs (a few KB), SBOMs (a few MB for thousands of packages),
# signature and attestation payloads (KB). Layers are never read into memory.
BLOB = Bound("blob", 16 * 1024 * 1024)
TOKEN = Bound("token answer", 1024 * 1024)  # a JWT of a few KB
TAGS = Bound("tag list", 8 * 1024 * 1024)  # 100 000 tags of 80 characters


@dataclass(frozen=True)
class Answer:
    """A registry's answer, its body already read (empty where none was wanted)."""

    status_code: int
    headers: Mapping[str, str]
    content: bytes

    def json(self) -> Any:
        return json.loads(self.content)


def exchange(session: requests.Session, host: str, method: str, url: str,
             headers: Mapping[str, str], bound: Bound | None, body: Body, timeout: float
             ) -> Answer:
    """One registry API call (fetch), its failures said as the registry's: a lost connection,
    a 429 or a 5xx is RegistryUnavailable (retried by the caller), the rest RegistryError."""
    try:
        answer = fetch(session, method, url, headers, bound, body=body, timeout=timeout)
    except requests.exceptions.SSLError as exc:
        raise RegistryError(f"{url}: TLS: {_reason(exc)}; a registry with its own CA needs "
                            f"it in /etc/docker/certs.d/{host}/ca.crt") from None
    except (requests.ConnectionError, requests.Timeout) as exc:
        raise RegistryUnavailable(f"{url}: {connection_reason(exc)}") from None
    except requests.RequestException as exc:
        raise RegistryError(f"{url}: {exc.__class__.__name__}: {exc}") from None
    if answer.status_code in TRANSIENT_STATUS:
        raise RegistryUnavailable(f"{url}: HTTP {answer.status_code}")
    return answer


def _reason(exc: Exception) -> str:
    """The innermost reason of a requests error, not urllib3's retry wrapping."""
    found = re.search(r"\[SSL: [A-Z_]+\][^(')]*", str(exc))
    return found.group(0).strip() if found else exc.__class__.__name__


def fetch(session: requests.Session, method: str, url: str, headers: Mapping[str, str],
          bound: Bound | None, *, body: Body = None, timeout: float,
          auth: tuple[str, str] | None = None, params: Mapping[str, Any] | None = None
          ) -> Answer:
    """`method url`, redirects followed (credentials kept for the host they are for), the
    final answer's body read within `bound` (None: not wanted). requests' own errors pass
    through; RegistryError for a body over its bound or too many redirects."""
    headers = {**headers, "Accept-Encoding": "identity"}  # the bytes as stored: the digest's
    for _ in range(MAX_REDIRECTS + 1):
        response = _send(session, requests.Request(method, url, headers, data=body,
                                                   params=params, auth=auth), timeout)
        target = _redirect(response, method, body)
        if target is None:
            return receive(response, bound, url)
        response.close()
        if _origin(target) != _origin(response.url):
            headers = {k: v for k, v in headers.items() if k.lower() != "authorization"}
            auth = None
        url, params = target, None
    raise RegistryError(f"{url}: more than {MAX_REDIRECTS} redirects")


def _send(session: requests.Session, request: requests.Request,
          timeout: float) -> requests.Response:
    """One request, nothing of its answer read yet: the session's transport adapter sends it
    as Session.send would, without Session.send's redirect handling, which reads a redirect's
    body whole (even with redirects off: it prepares the next request)."""
    prepared = session.prepare_request(request)
    url = str(prepared.url)
    # As Session.request: the environment's proxies, and REQUESTS_CA_BUNDLE over a default CA.
    settings = session.merge_environment_settings(url, {}, True, session.verify, session.cert)
    verify = True if settings["verify"] is None else settings["verify"]
    return session.get_adapter(url).send(prepared, stream=True, timeout=timeout, verify=verify,
                                         cert=settings["cert"], proxies=settings["proxies"])


def _redirect(response: requests.Response, method: str, body: Body) -> str | None:
    """Where a redirect sends the call, when it is one to follow: GET and HEAD always; a
    call with a body only when the same call can be made again (307, 308, not a stream)."""
    location = response.headers.get("Location")
    if response.status_code not in REDIRECTS or not location:
        return None
    repeatable = response.status_code in SAME_METHOD_REDIRECTS and (
        body is None or isinstance(body, bytes))
    if method not in ("GET", "HEAD") and not repeatable:
        return None
    return urljoin(response.url, location)


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme, parts.netloc


def receive(response: requests.Response, bound: Bound | None, url: str) -> Answer:
    """The answer with its body read within `bound` when wanted (a 2xx answer and a bound);
    any other body is drained a little and dropped. The response is closed either way."""
    try:
        wanted = bound is not None and 200 <= response.status_code < 300
        content = bounded_body(response, bound, url) if bound and wanted else _drain(response)
    except urllib3.exceptions.HTTPError as exc:
        # Read from the raw stream, a body cut mid-way is urllib3's error: said as requests
        # says it, so the callers retry it as they retry a connection lost before the answer.
        raise requests.ConnectionError(f"{url}: {exc.__class__.__name__}: {exc}") from None
    finally:
        response.close()
    return Answer(response.status_code, response.headers, content)


def bounded_body(response: requests.Response, bound: Bound, url: str) -> bytes:
    """At most `bound.size` bytes of the body; RegistryError as soon as its Content-Length
    or the bytes read pass it (a few more than the bound are read, never the whole)."""
    announced = _content_length(response)
    if announced is not None and announced > bound.size:
        raise RegistryError(f"{url}: a {bound.what} of {announced} bytes (Content-Length) is "
                            f"over the limit of {bound}: not read")
    received, count = bytearray(), 0
    if bound.sink is not None:
        bound.sink.restart()
    for chunk in response.raw.stream(CHUNK, decode_content=True):
        count += len(chunk)
        if count > bound.size:
            raise RegistryError(f"{url}: a {bound.what} of more than {bound} (the limit): "
                                "not read further")
        if bound.sink is None:
            received += chunk
        else:
            bound.sink.write(chunk)
    return bytes(received)


def _drain(response: requests.Response) -> bytes:
    """Nothing of an unwanted body; reading a short one to its end keeps the connection."""
    read = 0
    for chunk in response.raw.stream(CHUNK, decode_content=True):
        read += len(chunk)
        if read > DISCARD:
            break
    return b""


def _content_length(response: requests.Response) -> int | None:
    try:
        return int(response.headers.get("Content-Length", ""))
    except ValueError:
        return None
