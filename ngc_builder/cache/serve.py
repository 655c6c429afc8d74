"""The cache's HTTP server process: `python -m ngc_builder.cache.serve ROOT ADDRESS PORT LOG`.

Python's own threaded static-file server (http.server) serving the cache folder read-only:
pip and apt only GET static files (the PEP 503 pages and Packages files are generated, see
`index.py`), so a static server is all that is needed, it runs wherever the builder runs
(no root, no package to install, no port 80), and each build host can start its own.

One line per request goes to LOG, rotated at 8 MiB with two older files kept (`LOG.1`,
`LOG.2`): the server lives across runs and a release asks it for thousands of files.

Every container on the bridge can ask it anything, so it answers only for the cache's own
trees (the PEP 503 pages, wheels, .debs, apt repositories) and its marker, never lists a
folder, never follows a link out of the cache, keeps its logs where it does not serve, binds
one concrete address (a wildcard is refused) and drops a connection idle for 30 s.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import sys
from functools import partial
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from logging.handlers import RotatingFileHandler
from pathlib import Path

from ngc_builder.cache.store import MARKER, SERVED_TREES
from ngc_builder.errors import message_line

LOG_BYTES = 8 << 20
LOG_BACKUPS = 2
requests_log = logging.getLogger("ngc_builder.cache.requests")


IDLE_SECONDS = 30


class CacheHandler(SimpleHTTPRequestHandler):
    """GET and HEAD only (SimpleHTTPRequestHandler's), one log line per request, and only
    for what `served` allows."""

    timeout = IDLE_SECONDS  # a half-sent request does not hold a thread for ever

    def translate_path(self, path: str) -> str:
        found = super().translate_path(path)
        return found if served(Path(self.directory), Path(found)) else NOWHERE

    def list_directory(self, path: str | os.PathLike[str]) -> None:
        self.send_error(HTTPStatus.NOT_FOUND)  # index pages are generated files, not listings
        return None

    def log_message(self, format: str, *args: object) -> None:
        # The request line is whatever a container sent: an ESC or a CR in its path would
        # reach whoever reads the log on a terminal, a newline would forge a log line.
        requests_log.info("%s %s", self.address_string(), message_line(format % args))


NOWHERE = "/nonexistent/ngc-cache"  # translate_path's answer for what is not served: a 404


def served(root: Path, path: Path) -> bool:
    """`path` (already inside `root`: http.server drops `..`) is the marker or lies in one of
    the served trees, and with links resolved it is still inside the cache."""
    real_root = root.resolve()
    try:
        parts = path.relative_to(root).parts
        real = path.resolve()
    except (ValueError, OSError, RuntimeError):
        return False
    allowed = parts == (MARKER,) or (len(parts) >= 1 and parts[0] in SERVED_TREES)
    return allowed and real.is_relative_to(real_root)


def concrete_address(address: str) -> str:
    """The one address to bind: an IP of this machine, never a wildcard (which would serve
    the cache on every interface)."""
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        raise ValueError(f"{address!r} is not an IP address") from None
    if parsed.is_unspecified or parsed.is_multicast:
        raise ValueError(f"{address} is not one concrete address (a wildcard serves every "
                         "interface)")
    return str(parsed)


def log_requests(path: str) -> None:
    handler = RotatingFileHandler(path, maxBytes=LOG_BYTES, backupCount=LOG_BACKUPS)
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
    requests_log.addHandler(handler)
    requests_log.setLevel(logging.INFO)
    requests_log.propagate = False


USAGE = "usage: python -m ngc_builder.cache.serve CACHE_ROOT ADDRESS PORT REQUEST_LOG"


def main(argv: list[str]) -> int:
    """The server `cache/server.py` starts; by hand, a wrong call is one line and exit 2."""
    try:
        root, address, port, log = argv
        address = concrete_address(address)
        number = int(port)
        if not 0 < number < 65536:
            raise ValueError(f"{port} is not a TCP port")
    except ValueError as exc:
        print(f"ngc-cache: {exc if len(argv) == 4 else USAGE}", file=sys.stderr)
        return 2
    log_requests(log)
    handler = partial(CacheHandler, directory=root)
    with ThreadingHTTPServer((address, number), handler) as server:
        server.daemon_threads = True
        server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
