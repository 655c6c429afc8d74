"""The cache server: its request log rotates (a server living across months of releases cannot
fill the disk), and it serves every container on the bridge only the cache's own files."""

from __future__ import annotations

import contextlib
import functools
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
import requests

from ngc_builder.cache import serve
from ngc_builder.cache.server import ensure_serving, served_elsewhere
from ngc_builder.cache.store import MARKER, PackageCache, open_cache
from ngc_builder.errors import InputError, StepError

pytestmark = pytest.mark.unit


def test_the_request_log_rotates_and_keeps_two_older_files(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(serve, "LOG_BYTES", 4096)
    log = tmp_path / "requests.log"
    serve.log_requests(str(log))
    try:
        for number in range(400):
            serve.requests_log.info("172.30.0.2 GET /files/%064d/x.whl HTTP/1.1 200 -", number)
    finally:
        for handler in list(serve.requests_log.handlers):
            handler.close()
            serve.requests_log.removeHandler(handler)
    kept = sorted(path.name for path in tmp_path.iterdir())
    assert kept == ["requests.log", "requests.log.1", "requests.log.2"]
    assert all(path.stat().st_size <= 4096 for path in tmp_path.iterdir())
    assert log.read_text().splitlines()[-1].endswith(f"{399:064d}/x.whl HTTP/1.1 200 -")


@pytest.fixture
def cache_root(tmp_path: Path) -> Path:
    """A cache beside a home folder holding a credential, as a mistyped NGC_CACHE_DIR would
    put one: wheels, an index page, the marker, logs, and links that lead out."""
    home = tmp_path / "home"
    (home / ".docker").mkdir(parents=True)
    (home / ".docker" / "config.json").write_text(SECRET)
    root = tmp_path / "cache"
    (root / "files" / "ab").mkdir(parents=True)
    (root / "files" / "ab" / "x-1-py3-none-any.whl").write_bytes(b"wheel")
    (root / "simple" / "x").mkdir(parents=True)
    (root / "simple" / "x" / "index.html").write_text("<a>x</a>")
    (root / "logs").mkdir()
    (root / "logs" / "requests-172.17.0.1-3149.log").write_text("172.17.0.5 GET /files/...")
    (root / MARKER).write_text("ngc-builder package cache 0011\n")
    (root / "files" / "leak.whl").symlink_to(home / ".docker" / "config.json")
    (root / "apt").symlink_to(home)
    (root / "stray.txt").write_text("not the cache's")
    return root


SECRET = '{"auths": {"reg.example": {"auth": "cm9ib3Q6c2VjcmV0"}}}'


@contextlib.contextmanager
def serving(root: Path, idle: float = serve.IDLE_SECONDS) -> Iterator[str]:
    handler = type("Quiet", (serve.CacheHandler,), {"timeout": idle,
                                                    "log_message": lambda *args: None})
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(("path", "status"), [
    ("/files/ab/x-1-py3-none-any.whl", 200), ("/simple/x/", 200), (f"/{MARKER}", 200),
    ("/files/leak.whl", 404), ("/apt/.docker/config.json", 404),  # links out of the cache
    ("/files/", 404), ("/files/ab/", 404), ("/", 404),  # no listing
    ("/logs/requests-172.17.0.1-3149.log", 404), ("/stray.txt", 404),
    ("/files/../stray.txt", 404), ("/%2e%2e/home/.docker/config.json", 404),
])
def test_only_the_caches_own_trees_are_served(cache_root: Path, path: str, status: int) -> None:
    with serving(cache_root) as url:
        answer = requests.get(url + path, timeout=5, allow_redirects=False)
    assert answer.status_code == status
    assert "cm9ib3Q6c2VjcmV0" not in answer.text and "172.17.0.5" not in answer.text


def test_an_idle_half_sent_request_is_dropped(cache_root: Path) -> None:
    with serving(cache_root, idle=0.5) as url:
        host, port = url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=5) as half:
            half.sendall(b"GET /files/ab/x-1-py3-none-any.whl HTTP/1.1\r\nHost: x\r\n")
            started = time.monotonic()
            assert half.recv(1024) == b""  # closed by the server, not by our 5 s timeout
            assert time.monotonic() - started < 4


@pytest.mark.parametrize("address", ["0.0.0.0", "::", "", "ngc-cache"])
def test_a_wildcard_or_a_name_is_never_bound(tmp_path: Path, address: str) -> None:
    with pytest.raises(ValueError):
        serve.concrete_address(address)
    done = subprocess.run([sys.executable, "-m", "ngc_builder.cache.serve", str(tmp_path),
                           address, "0", str(tmp_path / "log")], capture_output=True,
                          text=True, timeout=30, check=False)
    assert done.returncode == 2 and done.stderr.startswith("ngc-cache: ")
    assert "Traceback" not in done.stderr and len(done.stderr.splitlines()) == 1
    with pytest.raises(StepError, match="the engine reports"):
        ensure_serving(PackageCache(tmp_path), address, 3149)


def test_a_folder_that_is_not_a_cache_is_refused_and_left_alone(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    with pytest.raises(InputError, match=r"not a package cache: no ngc-cache.txt and it holds "
                                         r"'\.ssh'"):
        open_cache(home)
    assert sorted(path.name for path in home.iterdir()) == [".ssh"]
    assert (open_cache(tmp_path / "new").root / MARKER).is_file()  # made in a new folder
    (tmp_path / "older" / "files").mkdir(parents=True)  # a cache from before the marker
    assert (open_cache(tmp_path / "older").root / MARKER).is_file()


@pytest.mark.parametrize(("argv", "line"), [
    (["--help"], "ngc-cache: usage: python -m ngc_builder.cache.serve CACHE_ROOT ADDRESS "
                 "PORT REQUEST_LOG"),
    (["/c", "0.0.0.0", "3149", "/c/l.log"], "ngc-cache: 0.0.0.0 is not one concrete address "
                                             "(a wildcard serves every interface)"),
    (["/c", "127.0.0.1", "99999", "/c/l.log"], "ngc-cache: 99999 is not a TCP port"),
])
def test_a_wrong_call_by_hand_is_one_line_and_exit_2(
        argv: list[str], line: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert serve.main(argv) == 2
    assert capsys.readouterr().err == line + "\n"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def real_server(root: Path, log: Path) -> Iterator[int]:
    """The server process `cache/server.py` starts, on loopback; its port."""
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "ngc_builder.cache.serve", str(root),
                                "127.0.0.1", str(port), str(log)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError):
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            time.sleep(0.1)
        yield port
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_escapes_and_carriage_returns_in_a_request_reach_the_log_escaped(
        cache_root: Path, tmp_path: Path) -> None:
    """Every container on the bridge can send any bytes in a request line: an ESC sequence
    (retitling, clearing the terminal of whoever reads the log) and a CR (which overwrites
    the log line as a terminal shows it) are written as escapes, one line per request."""
    log = tmp_path / "requests.log"
    with real_server(cache_root, log) as port:
        for line in (b"GET /files/\x1b]2;pwned\x07\x1b[2J HTTP/1.0",
                     b"GET /simple/x/\rforged: 200 HTTP/1.0"):
            with socket.create_connection(("127.0.0.1", port), timeout=5) as client:
                client.sendall(line + b"\r\n\r\n")
                while client.recv(4096):
                    pass
    text = log.read_text(encoding="utf-8", errors="replace")
    assert not {"\x1b", "\x07", "\r"} & set(text)
    assert "GET /files/\\x1b]2;pwned\\x07\\x1b[2J HTTP/1.0" in text
    assert "\\rforged: 200" in text


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_the_server_outliving_its_run_keeps_none_of_its_secrets(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A CI job's environment holds the registry token and the signing key's password; the
    server it starts outlives the job (the next run finds it): before, it kept them all."""
    secret = "s3cr3t-" + "token"
    for name in ("NGC_REGISTRY_TOKEN", "NGC_SIGNING_PASSWORD", "CI_JOB_TOKEN"):
        monkeypatch.setenv(name, secret)
    cache = PackageCache(tmp_path / "cache")
    open_cache(cache.root)
    url = ensure_serving(cache, "127.0.0.1", _free_port())
    pids = [p for p in Path("/proc").iterdir() if p.name.isdigit()
            and str(cache.root).encode() in _read(p / "cmdline")]
    try:
        assert len(pids) == 1 and requests.get(url + MARKER, timeout=5).status_code == 200
        environ = _read(pids[0] / "environ")
        assert environ and secret.encode() not in environ
        assert b"PATH=" in environ  # what it needs is kept
        assert (pids[0] / "cwd").resolve() == cache.root.resolve()
    finally:
        for pid in pids:
            subprocess.run(["kill", pid.name], check=False)


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:  # a process that ended, or another user's
        return b""


def test_a_cache_the_site_serves_is_used_only_when_it_is_this_very_cache(
        tmp_path: Path) -> None:
    """NGC_CACHE_ADDRESS (`slurm.cache_address`): a node's builds reach the cache the site
    serves there; nothing is started here, and a server that answers with another cache's
    marker, or none that answers, stops the run in one line."""
    cache, other = PackageCache(tmp_path / "cache"), PackageCache(tmp_path / "other")
    open_cache(cache.root)
    open_cache(other.root)
    port = _free_port()
    url = ensure_serving(cache, "127.0.0.1", port)  # the site's server, for this folder
    pids = [p for p in Path("/proc").iterdir() if p.name.isdigit()
            and str(cache.root).encode() in _read(p / "cmdline")]
    try:
        assert served_elsewhere(cache, "127.0.0.1", port) == url
        with pytest.raises(StepError, match="another package cache answers"):
            served_elsewhere(other, "127.0.0.1", port)
        with pytest.raises(StepError, match="NGC_CACHE_ADDRESS: no answer at"):
            served_elsewhere(cache, "127.0.0.1", _free_port())
    finally:
        for pid in pids:
            subprocess.run(["kill", pid.name], check=False)
