"""The cache's HTTP server process: `python -m ngc_builder.cache.serve ROOT ADDRESS PORT`.

Python's own threaded static-file server (http.server) serving the cache folder read-only:
pip and apt only GET static files (the PEP 503 pages and Packages files are generated, see
`index.py`), so a static server is all that is needed, it runs wherever the builder runs
(no root, no package to install, no port 80), and each build host can start its own.
"""

from __future__ import annotations

import sys
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer


class CacheHandler(SimpleHTTPRequestHandler):
    """GET and HEAD only (SimpleHTTPRequestHandler's), one log line per request on stderr."""

    def log_message(self, format: str, *args: object) -> None:
        sys.stderr.write(f"{self.address_string()} {format % args}\n")


def main(argv: list[str]) -> int:
    root, address, port = argv
    handler = partial(CacheHandler, directory=root)
    with ThreadingHTTPServer((address, int(port)), handler) as server:
        server.daemon_threads = True
        server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
