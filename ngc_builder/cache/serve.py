"""The cache's HTTP server process: `python -m ngc_builder.cache.serve ROOT ADDRESS PORT LOG`.

Python's own threaded static-file server (http.server) serving the cache folder read-only:
pip and apt only GET static files (the PEP 503 pages and Packages files are generated, see
`index.py`), so a static server is all that is needed, it runs wherever the builder runs
(no root, no package to install, no port 80), and each build host can start its own.

One line per request goes to LOG, rotated at 8 MiB with two older files kept (`LOG.1`,
`LOG.2`): the server lives across runs and a release asks it for thousands of files.
"""

from __future__ import annotations

import logging
import sys
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from logging.handlers import RotatingFileHandler

LOG_BYTES = 8 << 20
LOG_BACKUPS = 2
requests_log = logging.getLogger("ngc_builder.cache.requests")


class CacheHandler(SimpleHTTPRequestHandler):
    """GET and HEAD only (SimpleHTTPRequestHandler's), one log line per request."""

    def log_message(self, format: str, *args: object) -> None:
        requests_log.info("%s %s", self.address_string(), format % args)


def log_requests(path: str) -> None:
    handler = RotatingFileHandler(path, maxBytes=LOG_BYTES, backupCount=LOG_BACKUPS)
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
    requests_log.addHandler(handler)
    requests_log.setLevel(logging.INFO)
    requests_log.propagate = False


def main(argv: list[str]) -> int:
    root, address, port, log = argv
    log_requests(log)
    handler = partial(CacheHandler, directory=root)
    with ThreadingHTTPServer((address, int(port)), handler) as server:
        server.daemon_threads = True
        server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
