"""A Hugging Face hub's file layout served on 127.0.0.1, for the real download code
(``huggingface_hub`` with ``HF_ENDPOINT`` pointing here): ``HEAD``/``GET
/{repo}/resolve/{revision}/{path}`` with the commit, ETag and size headers the hub sends,
byte ranges (resumed downloads), and switches to cut a transfer short or serve damaged
bytes."""

from __future__ import annotations

import hashlib
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote

COMMIT = "0123456789abcdef0123456789abcdef01234567"


class Hub:
    def __init__(self) -> None:
        self.files: dict[tuple[str, str], bytes] = {}
        self.requests: list[tuple[str, str, str | None]] = []  # method, path, Range
        self.cut: dict[tuple[str, str], int] = {}  # (repo, path) -> drop its next GET after N bytes
        self.damage: set[tuple[str, str]] = set()  # serve these with a flipped byte
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                return None

            def _find(self) -> tuple[tuple[str, str], bytes] | None:  # (repo, path), bytes
                parts = unquote(self.path.split("?")[0]).strip("/").split("/")
                if len(parts) < 5 or parts[2] != "resolve":
                    return None
                key = (f"{parts[0]}/{parts[1]}", "/".join(parts[4:]))
                data = hub.files.get(key)
                if data is None:
                    return None
                if key in hub.damage:
                    data = bytes([data[0] ^ 0xFF]) + data[1:]
                return key, data

            def _headers(self, data: bytes, status: int = 200, extra: dict | None = None) -> None:
                self.send_response(status)
                self.send_header("X-Repo-Commit", COMMIT)
                self.send_header("ETag", f'"{hashlib.sha256(data).hexdigest()}"')
                self.send_header("Accept-Ranges", "bytes")
                for key, value in (extra or {}).items():
                    self.send_header(key, value)
                self.end_headers()

            def do_HEAD(self) -> None:  # noqa: N802 - http.server's naming
                hub.requests.append(("HEAD", self.path, None))
                found = self._find()
                if found is None:
                    self.send_response(404)
                    self.send_header("X-Error-Code", "EntryNotFound")
                    self.end_headers()
                    return
                self._headers(found[1], extra={"Content-Length": str(len(found[1]))})

            def do_GET(self) -> None:  # noqa: N802
                ranged = self.headers.get("Range")
                hub.requests.append(("GET", self.path, ranged))
                found = self._find()
                if found is None:
                    self.send_response(404)
                    self.end_headers()
                    return
                data = found[1]
                start = 0
                if ranged and ranged.startswith("bytes="):
                    start = int(ranged[6:].split("-")[0])
                body = data[start:]
                status = 206 if start else 200
                extra = {"Content-Length": str(len(body))}
                if start:
                    extra["Content-Range"] = f"bytes {start}-{len(data) - 1}/{len(data)}"
                self._headers(data, status, extra)
                if found[0] in hub.cut:
                    limit = hub.cut.pop(found[0])
                    self.wfile.write(body[:limit])
                    self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> Hub:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
