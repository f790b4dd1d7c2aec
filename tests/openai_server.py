"""A scriptable OpenAI-compatible HTTP server on loopback, for tests of LLM judges and agents.

It speaks ``POST /v1/chat/completions`` (Chat Completions request/response JSON, including
``tool_calls`` and ``usage``) and ``GET /v1/models``. Each chat request is answered by the next
scripted reply (``server.push(...)``) or, when the queue is empty, by ``responder(request_json)``.
A reply spec is one of:

* ``str`` — the assistant's content;
* ``list`` of ``tool_call(name, {...})`` — an assistant message with tool calls;
* ``Reply(...)`` — anything else: an HTTP error status (optionally quoting the Authorization
  header it was sent, ``echo_auth``), a delay before answering (to provoke client timeouts), a raw
  (e.g. malformed) body, or content plus tool calls.

Every request is recorded (``server.seen``; ``server.requests`` holds the chat request bodies).
Use it as a context manager (``with FakeOpenAI() as server: server.base_url``) or through the
``openai_server`` pytest fixture.
"""

from __future__ import annotations

import base64
import itertools
import json
import threading
import time
import urllib.parse
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


@dataclass
class Reply:
    content: str | None = None
    tool_calls: list[dict] = field(default_factory=list)
    status: int = 200
    delay: float = 0.0  # seconds before answering
    raw: str | None = None  # sent verbatim as the body instead of a completion
    headers: dict[str, str] = field(default_factory=dict)
    finish_reason: str | None = None
    trickle: float = 0.0  # seconds between the body's bytes (a server that answers, but slowly)
    echo_auth: bool = False  # the error body quotes the Authorization header: raw, base64 and URL-encoded


Spec = str | list | Reply
Responder = Callable[[dict], Spec]


@dataclass(frozen=True)
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    json: Any


def tool_call(name: str, arguments: dict | str) -> dict:
    """A tool call for a reply; ``arguments`` as a dict, or a string (e.g. malformed JSON)."""
    return {"name": name, "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments)}


def _as_reply(spec: Spec) -> Reply:
    if isinstance(spec, Reply):
        return spec
    if isinstance(spec, str):
        return Reply(content=spec)
    if isinstance(spec, list):
        return Reply(tool_calls=spec)
    raise TypeError(f"expected a reply spec (str, list of tool calls, Reply), got {type(spec).__name__}")


def _tokens(value: Any) -> int:
    """A rough token count (words), enough for ``usage`` to be plausible and non-zero."""
    return len(json.dumps(value).split()) if value is not None else 0


class FakeOpenAI:
    def __init__(self, responder: Responder | None = None, models: tuple[str, ...] = ("test-model",)):
        self.responder = responder
        self.models = models
        self.seen: list[Seen] = []
        self._queue: deque[Spec] = deque()
        self._lock = threading.Lock()
        self._closing = threading.Event()  # cuts delays short on shutdown
        self._ids = itertools.count(1)
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        # a short poll interval keeps shutdown (and so each test's teardown) quick
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def requests(self) -> list[dict]:
        """The JSON bodies of the chat-completion requests received, in order."""
        return [s.json for s in self.seen if s.path.endswith("/chat/completions")]

    def push(self, *specs: Spec) -> None:
        with self._lock:
            self._queue.extend(specs)

    def start(self) -> "FakeOpenAI":
        self._thread.start()
        return self

    def close(self) -> None:
        self._closing.set()
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self) -> "FakeOpenAI":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()

    def _next_reply(self, request: dict) -> Reply:
        with self._lock:
            spec = self._queue.popleft() if self._queue else None
        if spec is None and self.responder is not None:
            spec = self.responder(request)
        if spec is None:
            return Reply(status=500, raw=json.dumps({"error": {"message": "no scripted reply left",
                                                               "type": "server_error"}}))
        return _as_reply(spec)

    def _completion(self, request: dict, reply: Reply) -> dict:
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.tool_calls:
            message["tool_calls"] = [{"id": f"call_{next(self._ids)}", "type": "function", "function": dict(c)}
                                     for c in reply.tool_calls]
        prompt, completion = _tokens(request.get("messages")), _tokens(message)
        return {
            "id": f"chatcmpl-{next(self._ids)}", "object": "chat.completion", "created": int(time.time()),
            "model": request.get("model", self.models[0]),
            "choices": [{"index": 0, "message": message, "logprobs": None,
                         "finish_reason": reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
        }

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # keep test output quiet
                pass

            def _send(self, status: int, body: str, headers: dict[str, str] | None = None,
                      trickle: float = 0.0) -> None:
                data = body.encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for key, value in (headers or {}).items():
                        self.send_header(key, value)
                    self.end_headers()
                    if not trickle:
                        self.wfile.write(data)
                    for i in range(len(data) if trickle else 0):
                        self.wfile.write(data[i:i + 1])
                        self.wfile.flush()
                        if server._closing.wait(trickle):
                            return
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
                    pass

            def _error(self, status: int, message: str) -> None:
                self._send(status, json.dumps({"error": {"message": message, "type": "invalid_request_error"}}))

            def do_GET(self) -> None:
                server.seen.append(Seen("GET", self.path, dict(self.headers), None))
                if self.path.rstrip("/") == "/v1/models":
                    data = [{"id": m, "object": "model", "created": 0, "owned_by": "test"} for m in server.models]
                    self._send(200, json.dumps({"object": "list", "data": data}))
                else:
                    self._error(404, f"no route GET {self.path}")

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                try:
                    request = json.loads(raw or b"null")
                except json.JSONDecodeError:
                    request = raw.decode(errors="replace")
                server.seen.append(Seen("POST", self.path, dict(self.headers), request))
                if self.path.rstrip("/") != "/v1/chat/completions":
                    return self._error(404, f"no route POST {self.path}")
                if not isinstance(request, dict) or "messages" not in request:
                    return self._error(400, "expected a JSON body with 'messages'")
                if request.get("stream"):
                    return self._error(400, "this test server does not stream")
                reply = server._next_reply(request)
                if reply.delay and server._closing.wait(reply.delay):
                    return
                if reply.raw is not None:
                    return self._send(reply.status, reply.raw, reply.headers)
                if reply.status != 200:
                    message = f"scripted error {reply.status}"
                    if reply.echo_auth:  # a careless server that quotes the credentials it was sent
                        auth = self.headers.get("Authorization", "")
                        token = auth.partition(" ")[2]
                        message += (f"; you sent {auth!r}, base64 {base64.b64encode(auth.encode()).decode()}, "
                                    f"token base64 {base64.b64encode(token.encode()).decode()}, "
                                    f"url-encoded {urllib.parse.quote(token, safe='')}")
                    body = {"error": {"message": message, "type": "server_error"}}
                    return self._send(reply.status, json.dumps(body), reply.headers)
                self._send(200, json.dumps(server._completion(request, reply)), reply.headers, reply.trickle)

        return Handler


@pytest.fixture
def openai_server() -> Iterator[FakeOpenAI]:
    """A started ``FakeOpenAI``; script it with ``push`` or by setting ``responder``."""
    with FakeOpenAI() as server:
        yield server
