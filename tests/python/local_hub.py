"""A Hugging Face Hub of our own on 127.0.0.1, for the model-name tests (no network here).

It answers the requests huggingface_hub really makes, in the Hub's URL layout and with the
headers it reads (huggingface_hub/file_download.py, hf_api.py, utils/_http.py):

* ``GET /api/models/OWNER/REPO[/revision/REV]``: the model info (``sha``, ``siblings``);
* ``HEAD|GET /OWNER/REPO/resolve/REV/PATH``: the file, with ``X-Repo-Commit``, ``ETag`` (the
  sha256, as for LFS files), ``Content-Length``, and ``Range`` requests answered 206 (resumes);
* ``X-Error-Code`` on failures as the Hub sends them: ``RepoNotFound`` (404),
  ``RevisionNotFound`` (404), ``EntryNotFound`` (404), ``GatedRepo`` (401 without a token,
  403 with a token that has no access).

Every request is logged (method, path, Range, the token). ``cut_after`` makes the next full GET
of a file send that many bytes and drop the connection (a download cut midway); ``stall_after``
makes it send that many and hold the connection until ``release`` (a process killed midway).
The server runs on a thread; ``close()`` shuts it down.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Dict, List, Optional
from urllib.parse import unquote, urlsplit

# How long a stalled download holds its connection at most (the test releases it sooner).
STALL_LIMIT_SEC = 60.0


@dataclass
class Repo:
    """A model repo: its commits (commit sha → files) and branches/tags (name → commit sha)."""

    commits: Dict[str, Dict[str, bytes]] = field(default_factory=dict)
    refs: Dict[str, str] = field(default_factory=dict)
    gated: bool = False

    def commit(self, files: Dict[str, bytes], ref: str = "main") -> str:
        """Add a commit holding ``files`` and point ``ref`` at it; returns its sha."""
        digest = hashlib.sha1(repr(sorted((p, hashlib.sha256(b).hexdigest()) for p, b in files.items())).encode()
                              + str(len(self.commits)).encode())
        sha = digest.hexdigest()
        self.commits[sha] = dict(files)
        self.refs[ref] = sha
        return sha

    def resolve(self, revision: str) -> Optional[str]:
        return revision if revision in self.commits else self.refs.get(revision)


@dataclass
class Request:
    method: str
    path: str
    range: Optional[str]
    token: Optional[str]


class LocalHub:
    """The server; ``url`` is what HF_ENDPOINT gets."""

    def __init__(self, token: str = "hf_test_token") -> None:
        self.repos: Dict[str, Repo] = {}
        self.token = token
        self.log: List[Request] = []
        self.cut_after: Optional[int] = None
        self.stall_after: Optional[int] = None
        self.release = threading.Event()
        self._lock = threading.Lock()
        self._closed = False
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, name="local-hub", daemon=True)
        self._thread.start()

    def add(self, repo_id: str, files: Dict[str, bytes], gated: bool = False) -> Repo:
        repo = self.repos.setdefault(repo_id, Repo(gated=gated))
        repo.commit(files)
        return repo

    def record(self, request: Request) -> None:
        with self._lock:
            self.log.append(request)

    def requests(self) -> List[Request]:
        with self._lock:
            return list(self.log)

    def close(self) -> None:
        """Stop serving (the Hub becomes unreachable); a second call does nothing."""
        self.release.set()
        if self._closed:
            return
        self._closed = True
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)


_MODEL_API = re.compile(r"^/api/models/([^/]+/[^/]+?)(?:/revision/([^/]+))?$")
_RESOLVE = re.compile(r"^/([^/]+/[^/]+)/resolve/([^/]+)/(.+)$")
_RANGE = re.compile(r"^bytes=(\d+)-$")


def _handler(hub: LocalHub):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # the hub's own log is hub.log
            pass

        def do_GET(self) -> None:
            self._serve(body=True)

        def do_HEAD(self) -> None:
            self._serve(body=False)

        def _serve(self, body: bool) -> None:
            path = urlsplit(self.path).path
            auth = self.headers.get("Authorization", "")
            token = auth[len("Bearer "):] if auth.startswith("Bearer ") else None
            hub.record(Request(self.command, path, self.headers.get("Range"), token))
            api = _MODEL_API.match(path)
            if api:
                return self._model_info(api.group(1), unquote(api.group(2) or "main"))
            resolve = _RESOLVE.match(path)
            if resolve:
                return self._file(resolve.group(1), unquote(resolve.group(2)), unquote(resolve.group(3)), token, body)
            return self._error(404, "RepoNotFound", "not a Hub route")

        def _model_info(self, repo_id: str, revision: str) -> None:
            repo = hub.repos.get(repo_id)
            if repo is None:
                return self._error(404, "RepoNotFound", "Repository not found")
            sha = repo.resolve(revision)
            if sha is None:
                return self._error(404, "RevisionNotFound", "Invalid rev id")
            info = {"id": repo_id, "modelId": repo_id, "sha": sha, "private": False,
                    "gated": "manual" if repo.gated else False,
                    "siblings": [{"rfilename": p} for p in sorted(repo.commits[sha])]}
            self._send(200, json.dumps(info).encode(), {"Content-Type": "application/json"}, True)

        def _file(self, repo_id: str, revision: str, path: str, token: Optional[str], body: bool) -> None:
            repo = hub.repos.get(repo_id)
            if repo is None:
                return self._error(404, "RepoNotFound", "Repository not found", body)
            if repo.gated and token != hub.token:
                status = 403 if token else 401
                return self._error(status, "GatedRepo", "Access to this model is restricted", body)
            sha = repo.resolve(revision)
            if sha is None:
                return self._error(404, "RevisionNotFound", "Invalid rev id", body)
            data = repo.commits[sha].get(path)
            if data is None:
                return self._error(404, "EntryNotFound", "Entry not found", body, {"X-Repo-Commit": sha})
            headers = {"X-Repo-Commit": sha, "ETag": f'"{hashlib.sha256(data).hexdigest()}"',
                       "Accept-Ranges": "bytes", "Content-Type": "application/octet-stream"}
            wanted = _RANGE.match(self.headers.get("Range", ""))
            if wanted:
                start = int(wanted.group(1))
                headers["Content-Range"] = f"bytes {start}-{len(data) - 1}/{len(data)}"
                return self._send(206, data[start:], headers, body)
            cut, stall = (hub.cut_after, hub.stall_after) if body else (None, None)
            if cut is None and stall is None:
                return self._send(200, data, headers, body)
            hub.cut_after = hub.stall_after = None  # only this request
            self._send_head(200, len(data), headers)
            self.wfile.write(data[:cut if cut is not None else stall])
            self.wfile.flush()
            if stall is not None:
                hub.release.wait(STALL_LIMIT_SEC)
            self.close_connection = True

        def _error(self, status: int, code: str, message: str, body: bool = True,
                   extra: Optional[Dict[str, str]] = None) -> None:
            payload = json.dumps({"error": message}).encode()
            headers = {"X-Error-Code": code, "X-Error-Message": message, "Content-Type": "application/json",
                       **(extra or {})}
            self._send(status, payload, headers, body)

        def _send_head(self, status: int, length: int, headers: Dict[str, str]) -> None:
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(length))
            self.end_headers()

        def _send(self, status: int, payload: bytes, headers: Dict[str, str], body: bool) -> None:
            self._send_head(status, len(payload), headers)
            if body:
                self.wfile.write(payload)

    return Handler
