"""`make serve` and `make lab`, run for real: the Makefile targets as subprocesses on 127.0.0.1.

What a reader types is `make serve` / `make lab`, so that is what runs here — not the server
modules called in-process. Each test starts `make <target>` in its own session (make spawns
the server as a child, so stopping means signalling the whole process group), waits with a
deadline until the port answers, talks HTTP (and, for the lab, a kernel websocket) to it,
stops it and checks that nothing is left: no process of the group, no socket listening on
the port, no kernel.

* serve: a tiny html dir of our own with the `.pymq-built` stamp (`make serve HTML=<dir>`),
  so the test does not need the real book, which `make test` builds only after the unit
  tests; the real `_build/html` is checked too when it was built (skipped otherwise). A dir
  without the stamp must be refused (never built into, never deleted).
* lab: `make lab LAB_PORT=... LAB_ARGS=...` with a fixed token; the contents API lists
  notebooks/, a kernel started over the REST API runs in the venv's python, and
  `POST /api/shutdown` stops the server and its kernel.

Both bind 127.0.0.1 only: every listening socket on the port is 127.0.0.1, and 127.0.0.2
(also loopback on Linux, answered by a 0.0.0.0 bind) and the machine's non-loopback
address, if it has one, are refused.

The tests need the venv set up (`make` runs `tools/bootstrap.sh` first; a no-op then).
Every wait is bounded, so a hang fails a test instead of hanging CI.
"""
from __future__ import annotations

import html.parser
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import pytest
import yaml

from pymq_ref.tools.ports import free_port

if not sys.platform.startswith("linux"):
    pytest.skip("reads /proc to check processes and listening sockets: Linux only",
                allow_module_level=True)

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
BOOK_HTML = ROOT / "_build" / "html"
MAKE = shutil.which("make")
START_DEADLINE = 60.0  # seconds for a server to answer (measured: serve ~0.3 s, lab ~2.5 s)
STOP_DEADLINE = 20.0
HTTP_TIMEOUT = 10.0
CHAPTER = "notebooks/00_tour"

pytestmark = pytest.mark.skipif(MAKE is None, reason="no `make` on PATH")


# ---------------------------------------------------------------- what the book should show

def book_title() -> str:
    return yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["title"]


def chapter_heading(notebook: Path) -> str:
    """The `# ...` heading of a chapter's first markdown cell (the page's h1)."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    for cell in cells:
        if cell["cell_type"] == "markdown":
            for line in "".join(cell["source"]).splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    raise AssertionError(f"{notebook}: no '# heading' in a markdown cell")


class _Headings(html.parser.HTMLParser):
    """Text of <title> and of each <h1>, without Sphinx's '#' permalink anchors."""

    def __init__(self) -> None:
        super().__init__()
        self.title = ""
        self.h1: list[str] = []
        self._in: str | None = None
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("title", "h1") and self._in is None:
            self._in = tag
            if tag == "h1":
                self.h1.append("")
        elif tag == "a" and self._in and "headerlink" in (dict(attrs).get("class") or ""):
            self._skip += 1

    def handle_endtag(self, tag):
        if tag == self._in:
            self._in = None
        elif tag == "a" and self._skip:
            self._skip -= 1

    def handle_data(self, data):
        if self._in == "title" and not self._skip:
            self.title += data
        elif self._in == "h1" and not self._skip:
            self.h1[-1] += data


def headings(page: str) -> _Headings:
    parser = _Headings()
    parser.feed(page)
    parser.close()
    parser.title = " ".join(parser.title.split())
    parser.h1 = [" ".join(h.split()) for h in parser.h1]
    return parser


# ---------------------------------------------------------------- processes and sockets

def make_env(**extra: str) -> dict[str, str]:
    """This environment minus a parent make's variables (the file also runs under `make test-unit`):
    inherited MAKEFLAGS would carry the outer command line's overrides and jobserver fds."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "GNUMAKEFLAGS")}
    env.update(extra)
    return env


def _proc_stat(pid: str) -> tuple[str, int] | None:
    """(state, process group) of /proc/<pid>, None if it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    return fields[0], int(fields[2])


def cmdline(pid: int | str) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [a.decode(errors="replace") for a in raw.split(b"\0") if a]


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes in process group `pgid`."""
    members = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            st = _proc_stat(entry.name)
            if st and st[1] == pgid and st[0] != "Z":
                members.append(int(entry.name))
    return members


def processes_with(*needles: str) -> list[int]:
    """Live processes whose command line contains every needle."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and entry.name != str(os.getpid()):
            args = " ".join(cmdline(entry.name))
            st = _proc_stat(entry.name)
            if args and st and st[0] != "Z" and all(n in args for n in needles):
                found.append(int(entry.name))
    return found


def listeners(port: int) -> list[str]:
    """Local addresses of the TCP sockets in LISTEN state on `port` (IPv4 and IPv6)."""
    found = []
    for table, family in (("/proc/net/tcp", socket.AF_INET), ("/proc/net/tcp6", socket.AF_INET6)):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            address, port_hex = fields[1].split(":")
            if fields[3] != "0A" or int(port_hex, 16) != port:
                continue
            raw = bytes.fromhex(address)
            # /proc prints each 32-bit word of the address in host (little-endian) order
            raw = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
            found.append(socket.inet_ntop(family, raw))
    return found


def refuses(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=2):
            return False
    except ConnectionRefusedError:
        return True


def non_loopback_ipv4() -> str | None:
    """This machine's source address towards the outside, if it has one (no packet is sent)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))  # TEST-NET-1: never routed for real
        except OSError:
            return None
        ip = s.getsockname()[0]
    return None if ip.startswith("127.") or ip == "0.0.0.0" else ip


def assert_loopback_only(port: int) -> None:
    bound = listeners(port)
    assert bound, f"nothing listening on port {port}"
    assert set(bound) == {"127.0.0.1"}, f"port {port} is bound to {bound}, not only 127.0.0.1"
    assert refuses("127.0.0.2", port), "answers on 127.0.0.2: bound to more than 127.0.0.1"
    other = non_loopback_ipv4()
    if other:
        assert refuses(other, port), f"answers on this machine's address {other}"


class MakeTarget:
    """`make <args>` started in a new session; stopped by signalling its process group.

    Call order: start() -> wait_http() / get() ... -> stop() or wait_exit(); close() always
    (it kills whatever of the group is still alive).
    """

    def __init__(self, args: list[str], log_dir: Path, env: dict[str, str] | None = None):
        self.args = args
        self.log_path = log_dir / f"make-{args[0]}.log"
        self.env = env or make_env()
        self.proc: subprocess.Popen | None = None

    def start(self) -> "MakeTarget":
        self.started = time.monotonic()
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen([MAKE, "-C", str(ROOT), *self.args], stdin=subprocess.DEVNULL,
                                     stdout=self._log, stderr=subprocess.STDOUT, env=self.env,
                                     start_new_session=True)
        return self

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_http(self, url: str, headers: dict[str, str] | None = None) -> float:
        """Poll `url` until it answers (any HTTP status); seconds since start(). Fails if make exits."""
        deadline = time.monotonic() + START_DEADLINE
        while True:
            if self.proc.poll() is not None:
                pytest.fail(f"make {' '.join(self.args)} exited with {self.proc.returncode} before "
                            f"answering:\n{self.log()}")
            try:
                with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=2):
                    pass
                return time.monotonic() - self.started
            except urllib.error.HTTPError:
                return time.monotonic() - self.started
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if time.monotonic() > deadline:
                    pytest.fail(f"no answer from {url} within {START_DEADLINE} s:\n{self.log()}")
                time.sleep(0.05)

    def members(self) -> list[int]:
        return group_members(self.proc.pid)

    def wait_exit(self, timeout: float = STOP_DEADLINE) -> int:
        return self.proc.wait(timeout=timeout)

    def stop(self) -> int:
        """SIGTERM to the whole group (as Ctrl-C reaches all of it), then wait for make."""
        os.killpg(self.proc.pid, signal.SIGTERM)
        return self.wait_exit()

    def close(self) -> None:
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout=STOP_DEADLINE)
            except subprocess.TimeoutExpired:
                pass
        if hasattr(self, "_log"):
            self._log.close()


def wait_until(condition, what: str, timeout: float = STOP_DEADLINE):
    deadline = time.monotonic() + timeout
    while not (result := condition()):
        if time.monotonic() > deadline:
            pytest.fail(f"still not true after {timeout} s: {what}")
        time.sleep(0.05)
    return result


def assert_stopped(target: MakeTarget, port: int) -> None:
    # make exits once its child does; the server's other processes (if any) may take a moment
    wait_until(lambda: not target.members(), f"processes of make's group gone: {target.members()}")
    wait_until(lambda: not listeners(port), f"nothing listening on {port}: {listeners(port)}")
    assert refuses("127.0.0.1", port)


def get(url: str, headers: dict[str, str] | None = None, data: bytes | None = None,
        method: str | None = None) -> tuple[int, str, str]:
    """(status, content type, body text) — an HTTP error status is returned, not raised."""
    request = urllib.request.Request(url, data=data, headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT) as response:
            return response.status, response.headers.get("Content-Type", ""), response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Content-Type", ""), error.read().decode(errors="replace")


# ---------------------------------------------------------------- make serve

@pytest.fixture
def tiny_book(tmp_path: Path) -> Path:
    """A minimal built-book dir: index.html, one chapter page, the .pymq-built stamp."""
    site = tmp_path / "html"
    (site / "notebooks").mkdir(parents=True)
    title, heading = book_title(), chapter_heading(ROOT / f"{CHAPTER}.ipynb")
    (site / "index.html").write_text(
        f"<!DOCTYPE html><html><head><title>{html.escape(title)}</title></head>"
        f"<body><h1>{html.escape(title)}</h1><a href='{CHAPTER}.html'>tour</a></body></html>",
        encoding="utf-8")
    (site / f"{CHAPTER}.html").write_text(
        f"<!DOCTYPE html><html><head><title>{html.escape(heading)} &#8212; {html.escape(title)}</title>"
        f"</head><body><h1>{html.escape(heading)}</h1></body></html>", encoding="utf-8")
    (site / ".pymq-built").touch()
    return site


def test_serve_serves_the_given_html_dir_on_loopback_and_stops_cleanly(tiny_book: Path, tmp_path: Path):
    port = free_port()
    target = MakeTarget(["serve", f"PORT={port}", f"HTML={tiny_book}"], tmp_path)
    try:
        target.start()
        base = f"http://127.0.0.1:{port}/"
        target.wait_http(base)
        assert_loopback_only(port)

        status, ctype, body = get(base + "index.html")
        assert (status, ctype.split(";")[0]) == (200, "text/html")
        assert headings(body).h1 == [book_title()]

        status, _, body = get(base + f"{CHAPTER}.html")
        assert status == 200
        page = headings(body)
        assert page.h1 == [chapter_heading(ROOT / f"{CHAPTER}.ipynb")]
        assert page.title.endswith(book_title())

        # the given dir is the site root: the repository next to the Makefile is not served
        assert get(base + "Makefile")[0] == 404
        assert get(base + "_config.yml")[0] == 404
        assert "Serving" in target.log() and str(tiny_book) in target.log()

        target.stop()
        assert_stopped(target, port)
    finally:
        target.close()


def test_serve_refuses_an_html_dir_that_is_not_a_built_book(tmp_path: Path):
    """HTML=<dir> without the stamp is an error: no book build, and the dir is left alone
    (`make book` would `rm -rf $(HTML)` and rebuild only _build/html)."""
    site = tmp_path / "not-a-book"
    site.mkdir()
    (site / "keep.txt").write_text("mine")
    port = free_port()
    target = MakeTarget(["serve", f"PORT={port}", f"HTML={site}"], tmp_path)
    try:
        target.start()
        try:
            status = target.wait_exit(timeout=30)  # a refusal is immediate; a book build is not
        except subprocess.TimeoutExpired:
            pytest.fail(f"make serve did not refuse at once (building the book?):\n{target.log()}")
        assert status != 0
        assert "is not a built book" in target.log()
        assert "jupyter-book" not in target.log()
        assert (site / "keep.txt").read_text() == "mine"
        assert not listeners(port)
    finally:
        target.close()


@pytest.mark.skipif(not (BOOK_HTML / ".pymq-built").is_file(),
                    reason="_build/html was never built (make book / make test build it)")
def test_serve_the_built_book(tmp_path: Path):
    port = free_port()
    target = MakeTarget(["serve", f"PORT={port}"], tmp_path)
    try:
        target.start()
        base = f"http://127.0.0.1:{port}/"
        target.wait_http(base)
        assert_loopback_only(port)

        # jupyter-book's index.html redirects to the root page of _toc.yml
        root_page = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))["root"]
        status, _, body = get(base + "index.html")
        assert status == 200
        assert f"url={root_page}.html" in body

        status, _, body = get(base + f"{root_page}.html")
        assert status == 200
        assert book_title() in headings(body).title

        status, _, body = get(base + f"{CHAPTER}.html")
        assert status == 200
        page = headings(body)
        assert chapter_heading(ROOT / f"{CHAPTER}.ipynb") in page.h1
        assert page.title.endswith(book_title())

        target.stop()
        assert_stopped(target, port)
    finally:
        target.close()


# ---------------------------------------------------------------- make lab

def run_in_kernel(base_ws: str, kernel_id: str, token: str, code: str, timeout: float = 60) -> str:
    """Execute `code` over the kernel's websocket (as JupyterLab does); its stdout text."""
    import websocket  # websocket-client, a dependency of jupyter_server

    ws = websocket.create_connection(
        f"{base_ws}api/kernels/{kernel_id}/channels?session_id={uuid.uuid4().hex}",
        header=[f"Authorization: token {token}"], timeout=timeout)
    try:
        msg_id = uuid.uuid4().hex
        ws.send(json.dumps({
            "header": {"msg_id": msg_id, "username": "test", "session": uuid.uuid4().hex,
                       "msg_type": "execute_request", "version": "5.3"},
            "parent_header": {}, "metadata": {}, "buffers": [], "channel": "shell",
            "content": {"code": code, "silent": False, "store_history": False,
                        "user_expressions": {}, "allow_stdin": False, "stop_on_error": True},
        }))
        out, reply, idle = [], None, False
        deadline = time.monotonic() + timeout
        while reply is None or not idle:
            if time.monotonic() > deadline:
                pytest.fail(f"no execute_reply within {timeout} s (stdout so far: {out})")
            msg = json.loads(ws.recv())
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            kind = msg["header"]["msg_type"]
            if kind == "stream" and msg["content"]["name"] == "stdout":
                out.append(msg["content"]["text"])
            elif kind == "error":
                pytest.fail(f"kernel error: {msg['content']['ename']}: {msg['content']['evalue']}")
            elif kind == "execute_reply":
                reply = msg["content"]
            elif kind == "status" and msg["content"]["execution_state"] == "idle":
                idle = True
        assert reply["status"] == "ok", reply
        return "".join(out)
    finally:
        ws.close()


@pytest.mark.parametrize("stop", ["api_shutdown", "sigterm_group"])
def test_lab_on_loopback_lists_notebooks_runs_the_venv_kernel_and_shuts_down(tmp_path: Path, stop: str):
    """Stopped either as the lab's UI does (POST /api/shutdown) or as Ctrl-C / a cancelled CI job
    does (a signal to make's process group). Kernels run in sessions of their own, outside that
    group: either way the server must take its kernel down with it."""
    port, token = free_port(), secrets.token_hex(16)
    runtime = tmp_path / "runtime"  # our own: connection files identify our kernels
    config = tmp_path / "config"    # no user config changes what is tested
    config.mkdir()
    env = make_env(JUPYTER_RUNTIME_DIR=str(runtime), JUPYTER_CONFIG_DIR=str(config))
    lab_args = f"--ServerApp.token={token} --ServerApp.port_retries=0 --ServerApp.open_browser=False"
    target = MakeTarget(["lab", f"LAB_PORT={port}", f"LAB_ARGS={lab_args}"], tmp_path, env)
    auth = {"Authorization": f"token {token}"}
    base = f"http://127.0.0.1:{port}/"
    try:
        target.start()
        target.wait_http(base + "api/status", auth)
        assert_loopback_only(port)
        servers = [p for p in target.members() if any("jupyter" in a for a in cmdline(p)[:2])]
        assert servers, f"no jupyter process in make's group: {[cmdline(p) for p in target.members()]}"
        assert "--ServerApp.ip=127.0.0.1" in cmdline(servers[0])

        # the token is required, and accepted in a header or the query string
        assert get(base + "api/contents")[0] == 403
        status, _, body = get(base + "api/status", auth)
        assert status == 200 and "started" in json.loads(body)
        status, _, body = get(base + f"lab?token={token}")
        assert status == 200 and "JupyterLab" in body

        # the root dir is notebooks/: every chapter is listed, the repository root is not
        status, _, body = get(base + f"api/contents?token={token}")
        assert status == 200
        listing = json.loads(body)
        assert listing["type"] == "directory"
        names = {item["name"]: item["type"] for item in listing["content"]}
        assert names.get("00_tour.ipynb") == "notebook"
        chapters = {p.name for p in (ROOT / "notebooks").glob("*.ipynb")}
        assert chapters <= {n for n, t in names.items() if t == "notebook"}
        assert "Makefile" not in names

        status, _, body = get(base + "api/kernelspecs", auth)
        specs = json.loads(body)
        assert status == 200 and specs["default"] == "python3" and "python3" in specs["kernelspecs"]

        status, _, body = get(base + "api/kernels", auth, data=b'{"name": "python3"}', method="POST")
        assert status == 201, body
        kernel_id = json.loads(body)["id"]
        kernels = wait_until(lambda: processes_with("ipykernel_launcher", str(runtime), kernel_id),
                             "kernel process started")
        assert Path(cmdline(kernels[0])[0]).parent == VENV / "bin"
        prefix, executable = json.loads(run_in_kernel(
            f"ws://127.0.0.1:{port}/", kernel_id, token,
            "import json, sys; print(json.dumps([sys.prefix, sys.executable]))"))
        assert Path(prefix).resolve() == VENV.resolve()
        assert Path(executable).parent == VENV / "bin"

        if stop == "api_shutdown":
            status, _, _ = get(base + "api/shutdown", auth, data=b"", method="POST")
            assert status == 200
            assert target.wait_exit() == 0, target.log()
        else:
            target.stop()
        assert_stopped(target, port)
        wait_until(lambda: not processes_with("ipykernel_launcher", str(runtime)),
                   "the kernel stopped with the server")
        assert not list(runtime.glob("*.json")), "server/kernel files left in the runtime dir"
    finally:
        target.close()
        for pid in processes_with("ipykernel_launcher", str(runtime)):  # kernels have their own session
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
