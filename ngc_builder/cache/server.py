"""Start the cache's HTTP server on the build network, or find it already running there.

It listens on the address the engine's build containers reach the host at (the gateway of
their Docker network) and nowhere else; like the registry it outlives the run that started
it, so the next run finds it. A server of another cache on the same address and port is an
error, never silently used.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path

import requests

from ngc_builder.cache.serve import concrete_address
from ngc_builder.cache.store import MARKER, PackageCache, open_cache
from ngc_builder.errors import StepError
from ngc_builder.files import INPUT_LIMIT, read_tail, read_text

# The wait ends as soon as it answers; a machine whose cores are all busy building (a Slurm
# node, a CI runner) has been seen to take more than 10 s to start Python and bind.
START_SECONDS = 60.0
# What the server may keep of the environment of the run that starts it: it outlives that run
# (a CI job, whose environment holds registry tokens and the signing key's password) and
# needs none of it to serve files.
KEPT_VARIABLES = ("PATH", "PYTHONPATH", "LANG", "LC_ALL", "TZ")


def cache_token(cache: PackageCache) -> str:
    """The marker this cache serves (open_cache made it): tells our server from another
    cache's."""
    return read_text(open_cache(cache.root).root.joinpath(MARKER), INPUT_LIMIT)


def ensure_serving(cache: PackageCache, address: str, port: int) -> str:
    """The cache served at http://address:port/ (started if needed); returns that URL."""
    try:
        address = concrete_address(address)
    except ValueError as exc:
        raise StepError("cache", "serve", f"the engine reports {exc}") from None
    url = f"http://{address}:{port}/"
    wanted = cache_token(cache)
    served = _served_marker(url)
    if served == wanted:
        return url
    if served is not None:
        raise StepError("cache", "serve", f"{url} serves another package cache: set "
                        "NGC_CACHE_PORT, or NGC_CACHE_DIR to that cache")
    _start(cache, address, port)
    return _answering(cache, address, port, url, wanted)


def served_elsewhere(cache: PackageCache, address: str, port: int) -> str:
    """The URL of this cache as the site serves it at `address` (NGC_CACHE_ADDRESS: a Slurm
    node's builds reach the cache there), started by nobody here: it must answer with this
    cache's own marker, so the builds get the files this run's lock checks were made on."""
    host = f"[{address}]" if ":" in address else address
    url = f"http://{host}:{port}/"
    served = _served_marker(url)
    if served != cache_token(cache):
        why = "no answer" if served is None else "another package cache answers"
        raise StepError("cache", "serve", f"NGC_CACHE_ADDRESS: {why} at {url} (serve "
                        f"{cache.root} there: NGC_CACHE_DIR is the folder the site shares)")
    return url


def _answering(cache: PackageCache, address: str, port: int, url: str, wanted: str) -> str:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if _served_marker(url) == wanted:
            return url
        time.sleep(0.1)
    raise StepError("cache", "serve", f"no answer at {url}: {_log_tail(cache, address, port)}")


def _served_marker(url: str) -> str | None:
    with requests.Session() as session:
        session.trust_env = False  # the cache is on this machine: never through a proxy
        try:
            response = session.get(url + MARKER, timeout=2)
        except requests.RequestException:
            return None
    return response.text if response.status_code == 200 else ""


def _log(cache: PackageCache, address: str, port: int) -> Path:
    """Where the server says why it stopped or could not start (requests: `requests_log`)."""
    return cache.root / "logs" / f"serve-{address}-{port}.log"


def requests_log(cache: PackageCache, address: str, port: int) -> Path:
    return cache.root / "logs" / f"requests-{address}-{port}.log"


def _start(cache: PackageCache, address: str, port: int) -> None:
    log = _log(cache, address, port)
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as out:  # this start's errors only: the old ones are not this start's
        subprocess.Popen([sys.executable, "-m", "ngc_builder.cache.serve", str(cache.root),
                          address, str(port), str(requests_log(cache, address, port))],
                         stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                         start_new_session=True, env=server_environment(os.environ),
                         cwd=cache.root)  # not the job's checkout, which goes with the job


def server_environment(environ: Mapping[str, str]) -> dict[str, str]:
    return {name: environ[name] for name in KEPT_VARIABLES if name in environ}


def _log_tail(cache: PackageCache, address: str, port: int) -> str:
    lines = read_tail(_log(cache, address, port), INPUT_LIMIT).strip().splitlines()
    errors = [line for line in lines if "Error" in line]
    if any("Cannot assign requested address" in line for line in errors):
        return (f"{address} is not an address of this machine: the cache must run on the "
                "Docker engine's host")
    return (errors or lines or ["the server wrote nothing"])[-1]
