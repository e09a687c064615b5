"""A tiny OpenAI-compatible chat endpoint on 127.0.0.1 that answers extractions or a chosen fault.

For tests and fault benchmarks (like :class:`~kag_neo4j.models.scripted.ScriptedLLM`, it ships
so both can use it); it never listens beyond the loopback interface.

    with FakeEndpoint(fault="401", after=3) as endpoint:   # 3 good answers, then HTTP 401
        os.environ["KAG_LLM_BASE_URL"] = endpoint.url        # http://127.0.0.1:PORT/v1

A good answer is an extraction of the passage in the (first) user message: its capitalised
phrases are entities, and consecutive ones in a sentence are related. Faults: ``401``,
``404``, ``500`` (HTTP errors with an OpenAI-style body), ``timeout`` (the answer comes after
``delay`` seconds), ``invalid_json`` (a reply that is not JSON), ``refused`` (the server stops
listening: connections are refused).
"""

from __future__ import annotations

import http.server
import json
import re
import threading
import time
from itertools import pairwise
from types import TracebackType
from typing import Any, Literal

Fault = Literal["none", "401", "404", "500", "timeout", "invalid_json", "refused"]
FAULTS: tuple[Fault, ...] = ("none", "401", "404", "500", "timeout", "invalid_json", "refused")

_PHRASE = re.compile(r"\b[A-Z][a-z]+(?: [A-Z][a-z]+)*")
_SENTENCE = re.compile(r"[^.!?]+[.!?]?")
_PASSAGE = re.compile(r"(?ms)^(?:Text|正文):\n(.*)")  # the passage in kag_neo4j.prompts.extract's user message


def extraction_of(text: str) -> dict[str, Any]:
    """The deterministic extraction the endpoint answers for a passage."""
    entities: list[dict[str, Any]] = []
    relations: list[dict[str, Any]] = []
    seen: set[str] = set()
    for sentence in _SENTENCE.findall(text):
        names = [name for name in dict.fromkeys(_PHRASE.findall(sentence)) if len(name) > 2]
        for name in names:
            if name not in seen:
                seen.add(name)
                entities.append({"name": name, "type": "Entity", "description": "", "aliases": [], "properties": {}})
        relations += [{"subject": a, "predicate": "appears with", "object": b, "properties": {}} for a, b in pairwise(names)]
    return {"entities": entities, "events": [], "relations": relations}


def _chat_body(content: str) -> dict[str, Any]:
    return {
        "id": "fake", "object": "chat.completion", "created": 0, "model": "fake",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
    }


_ERRORS = {
    "401": (401, "Incorrect API key provided", "invalid_api_key"),
    "404": (404, "The model `fake` does not exist", "model_not_found"),
    "500": (500, "The server had an error while processing your request", "server_error"),
}


class FakeEndpoint:
    """A threaded HTTP server; ``fault`` applies to requests ``after`` + 1 to ``after`` + ``times``
    (``times=None``: every request from ``after`` + 1 on)."""

    def __init__(self, fault: Fault = "none", *, after: int = 0, times: int | None = None, delay: float = 3.0) -> None:
        if fault not in FAULTS:
            raise ValueError(f"unknown fault {fault!r}; use one of {FAULTS}")
        self.fault = fault
        self.after = after
        self.times = times
        self.delay = delay
        self.requests = 0
        self.answered = 0
        self._lock = threading.Lock()
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self.port = int(self._server.server_address[1])
        self._thread: threading.Thread | None = None
        self._closed = False

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _handler(self) -> type[http.server.BaseHTTPRequestHandler]:
        endpoint = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
                return

            def _send(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                with endpoint._lock:
                    endpoint.requests += 1
                    number = endpoint.requests - endpoint.after
                    faulty = endpoint.fault != "none" and number > 0 and (endpoint.times is None or number <= endpoint.times)
                if faulty and endpoint.fault in _ERRORS:
                    status, message, code = _ERRORS[endpoint.fault]
                    self._send(status, {"error": {"message": message, "type": "error", "code": code}})
                    return
                if faulty and endpoint.fault == "timeout":
                    time.sleep(endpoint.delay)
                if faulty and endpoint.fault == "invalid_json":
                    self._send(200, _chat_body("Sure! Here are the entities: Ada, Charles ..."))
                    return
                if faulty and endpoint.fault == "refused":
                    threading.Thread(target=endpoint.close, daemon=True).start()
                    self.close_connection = True
                    return
                users = [str(m.get("content", "")) for m in body.get("messages") or [] if m.get("role") == "user"]
                # the passage is in the first user message; a repair prompt comes after it
                found = next((m.group(1) for m in map(_PASSAGE.search, users) if m), users[0] if users else "")
                reply = _chat_body(json.dumps(extraction_of(found)))
                with endpoint._lock:  # counted before the reply leaves, so a client that has it sees the count
                    endpoint.answered += 1
                self._send(200, reply)

        return Handler

    def start(self) -> FakeEndpoint:
        self._thread = threading.Thread(target=self._server.serve_forever, name="kag-fake-endpoint", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop listening (later connections are refused)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FakeEndpoint:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()
