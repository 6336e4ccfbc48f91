"""Shared test helpers: corpus strategies, CLI runners and the hypothesis profile."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

settings.register_profile(
    "default",
    deadline=None,
    max_examples=150,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
#: Few examples under valgrind (scripts/memcheck.sh): it runs some 50 times slower.
settings.register_profile(
    "memcheck",
    deadline=None,
    max_examples=25,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"

# Text that exercises every tokeniser rule: ASCII words and punctuation, digits around
# separators, escaped entities, CJK (incl. the ranges SacreBLEU's zh tokeniser mis-reads),
# curly quotes and dashes, combining marks, odd whitespace and case-changing letters.
_PIECES = [
    "the",
    "cat",
    "The",
    "CAT",
    "a",
    "b",
    "mat",
    "on",
    "is",
    "Hund",
    "straße",
    "İstanbul",
    ".",
    ",",
    "!",
    "?",
    "'",
    '"',
    "-",
    "--",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "<",
    ">",
    "/",
    "\\",
    "@",
    "#",
    "$",
    "%",
    "^",
    "&",
    "*",
    "+",
    "=",
    "~",
    "`",
    "|",
    "_",
    ":",
    ";",
    "1",
    "2.5",
    "3,000",
    "1999.",
    "4-5",
    "12-",
    "0",
    "&quot;",
    "&amp;",
    "&lt;",
    "&gt;",
    "&apos;",
    "<skipped>",
    "中",
    "文",
    "字",
    "。",
    "，",
    "「",
    "」",
    "、",
    "한국어",
    "日本語",
    "\u201cquoted\u201d",
    "\u2019",
    "\u2013",
    "\u2014",
    "\u2026",
    "\U00020001",
    "\u2f81",
    "ｱ",
    "Ａ",
    "e\u0301",
    "\u00a0",
    "\u3000",
    "\t",
    "  ",
    "-\n",
    "\n",
    "€",
    "5€",
    "½",
]
words = st.sampled_from(_PIECES) | st.text(min_size=1, max_size=6)
sentences = st.lists(words, max_size=25).map(lambda ws: " ".join(ws)) | st.sampled_from(
    ["", " ", "the cat is on the mat", "the the the the the the the"]
)


@st.composite
def corpora(draw, max_lines: int = 6, max_refs: int = 3, allow_none: bool = False):
    """A hypothesis stream and 1..max_refs reference streams of the same length."""
    n = draw(st.integers(1, max_lines))
    k = draw(st.integers(1, max_refs))
    hyps = draw(st.lists(sentences, min_size=n, max_size=n))
    ref_item = (sentences | st.none()) if allow_none else sentences
    refs = [draw(st.lists(ref_item, min_size=n, max_size=n)) for _ in range(k)]
    return hyps, refs


@dataclass
class CliResult:
    exit_code: int
    stdout: str
    stderr: str


def run_cli(args: list[str], input: str | bytes | None = None) -> CliResult:
    """Run ``bleucli`` in-process through click's CliRunner (isolated std streams), as the
    launcher dispatches it (subcommands to their modules)."""
    from bleucli.cli.launch import dispatch

    runner = CliRunner()
    with runner.isolation(input=input) as (out, err, _):
        try:
            dispatch(list(args))
            code = 0
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else 1
        return CliResult(code, out.getvalue().decode(), err.getvalue().decode())


def run_subprocess(
    args: list[str],
    input: bytes | None = None,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess:
    """Run the real ``python -m bleucli`` with piped streams."""
    return subprocess.run(
        [sys.executable, "-m", "bleucli", *args],
        input=input,
        capture_output=True,
        cwd=cwd,
        env={**os.environ, **(env or {})},
        timeout=120,
    )


@pytest.fixture
def write(tmp_path: Path):
    """Write text (a list of lines or a string) to a file under tmp_path; return its path."""

    def _write(name: str, content: list[str] | str | bytes) -> str:
        path = tmp_path / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        elif isinstance(content, list):
            path.write_text("".join(line + "\n" for line in content), encoding="utf-8")
        else:
            path.write_text(content, encoding="utf-8")
        return str(path)

    return _write


#: The tests that read the scoring engine (the compiled core or the pure-Python engine,
#: ``BLEUCLI_PUREPYTHON=1``): metrics, tokenisers, the batch and mwer engines, meta-eval's
#: statistics, SacreBLEU's numbers and the printed outputs built on them. They carry the
#: ``engine`` marker and run on both engines (README command 2: the pure-Python pass is
#: ``-m engine``); everything else (neural models, the server, test sets, docs, packaging,
#: figures, browsers) is engine-independent and runs once. A test elsewhere that reads the
#: engine marks itself ``@pytest.mark.engine``.
ENGINE_TESTS = (
    "compat/",
    "metrics/",
    "tokenizers/",
    "metaeval/test_stats.py",
    "metaeval/test_oracle.py",
    "test_batch_engine.py",
    "test_batch_scoring.py",
    "test_bom.py",
    "test_cli.py",
    "test_confidence.py",
    "test_documents.py",
    "test_golden.py",
    "test_languages.py",
    "test_native.py",
    "test_native_hostile.py",
    "test_paired.py",
    "test_ranking.py",
    "test_resegment.py",
    "test_shards.py",
    "test_signature.py",
    "test_stream.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Marks each test of :data:`ENGINE_TESTS` ``engine``."""
    tests = Path(__file__).resolve().parent
    for item in items:
        where = Path(str(item.fspath)).resolve().relative_to(tests).as_posix()
        if any(where == rule or (rule.endswith("/") and where.startswith(rule))
               for rule in ENGINE_TESTS):  # fmt: skip
            item.add_marker(pytest.mark.engine)


@pytest.fixture(autouse=True)
def serial_lock(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """README command 2 runs the suite on every core (pytest-xdist, ``-n auto``); a test
    marked ``serial`` (it bounds wall-clock time, or compares two timings) runs alone: it
    holds one lock file exclusively while every other test shares it. Without xdist the
    lock is not taken."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        yield
        return
    import fcntl

    path = tmp_path_factory.getbasetemp().parent / "serial.lock"
    with open(path, "a") as handle:
        serial = request.node.get_closest_marker("serial") is not None
        fcntl.flock(handle, fcntl.LOCK_EX if serial else fcntl.LOCK_SH)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@pytest.fixture(scope="session")
def monkeypatch_session():
    """A monkeypatch usable from hypothesis tests (function-scoped fixtures are not)."""
    patcher = pytest.MonkeyPatch()
    yield patcher
    patcher.undo()


@pytest.fixture(scope="session", autouse=True)
def private_environment(tmp_path_factory: pytest.TempPathFactory):
    """No test touches the user's real cache or is steered by their BLEUCLI_* settings:
    the whole session gets a temporary cache, and subprocesses inherit it."""
    patcher = pytest.MonkeyPatch()
    patcher.setenv("BLEUCLI_CACHE", str(tmp_path_factory.mktemp("session-cache")))
    for name in (
        "BLEUCLI_OFFLINE",
        "BLEUCLI_MIRROR",
        "BLEUCLI_TESTSETS",
        "BLEUCLI_FORMAT",
        "BLEUCLI_SEED",
        "BLEUCLI_DEBUG",
        "BLEUCLI_MAX_EXTRACTED_BYTES",
        "BLEUCLI_DOWNLOAD_DEADLINE",
        "BLEUCLI_MIN_RATE",
        "GITHUB_ACTIONS",
        "SACREBLEU_FORMAT",
        "SACREBLEU_SEED",
        "SACREBLEU",
    ):
        patcher.delenv(name, raising=False)
    yield
    patcher.undo()


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private test-set cache for tests that use the built-in sample set."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("BLEUCLI_CACHE", str(folder))
    return folder


# -- a real HTTP server on 127.0.0.1 for download tests ----------------------------------------


@dataclass
class Route:
    body: bytes
    #: Serve only this many bytes (after announcing the full length) this many times.
    drop_after: int | None = None
    drops_left: int = 0
    delay: float = 0.0
    #: Send the body one byte at a time, this many seconds apart (a dripping server).
    drip: float = 0.0
    #: Send the headers, then nothing for this many seconds (a stalled server).
    stall: float = 0.0
    #: Announce this Content-Length instead of the body's (a lying server).
    announce: int | None = None


@dataclass
class LoopbackServer:
    """Routes are added per test; ``hits`` counts requests per path."""

    port: int
    routes: dict[str, Route] = field(default_factory=dict)
    hits: Counter = field(default_factory=Counter)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def serve(self, path: str, body: bytes, **kwargs) -> str:
        self.routes[path] = Route(body, **kwargs)
        return self.url(path)


@pytest.fixture(scope="session")
def http_server():
    state = LoopbackServer(port=0)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
            state.hits[self.path] += 1
            route = state.routes.get(self.path)
            if route is None:
                self.send_error(404)
                return
            time.sleep(route.delay)
            self.send_response(200)
            length = len(route.body) if route.announce is None else route.announce
            self.send_header("Content-Length", str(length))
            self.send_header("Content-Type", "application/octet-stream")
            self.end_headers()
            try:
                if route.stall:
                    self.wfile.flush()
                    time.sleep(route.stall)
                    return
                if route.drip:
                    for k in range(len(route.body)):
                        self.wfile.write(route.body[k : k + 1])
                        self.wfile.flush()
                        time.sleep(route.drip)
                    return
            except OSError:  # the client gave up, as it should
                return
            if route.drop_after is not None and route.drops_left > 0:
                route.drops_left -= 1
                self.wfile.write(route.body[: route.drop_after])
                self.wfile.flush()
                self.close_connection = True
                return
            self.wfile.write(route.body)

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield state
    server.shutdown()
    server.server_close()
