"""An OpenAI-compatible ``/v1/embeddings`` endpoint on loopback serving the project's own MiniLM embedder.

The Hindsight server under test embeds through it (``HINDSIGHT_API_EMBEDDINGS_PROVIDER=openai``), so
both drivers see the same vectors and nothing is downloaded or needs torch. Run it as
``python -m tests.support.embeddings_server --port N``; it answers ``GET /health`` once the model is
loaded, and exits on SIGTERM.
"""

import argparse
import json
import signal
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from memory.embedder import MiniLMEmbedder

MODEL_NAME = "all-MiniLM-L6-v2"
MAX_BODY = 8 * 1024 * 1024


class _Handler(BaseHTTPRequestHandler):
    embedder: MiniLMEmbedder

    def do_GET(self) -> None:
        if self.path.rstrip("/") in ("/health", "/v1/models"):
            self._send(200, {"status": "ok", "data": [{"id": MODEL_NAME, "object": "model"}]})
        else:
            self._send(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        if self.path.rstrip("/") != "/v1/embeddings":
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        length = int(self.headers.get("Content-Length") or 0)
        if length <= 0 or length > MAX_BODY:
            self._send(413 if length > MAX_BODY else 400, {"error": {"message": "bad body length"}})
            return
        try:
            body = json.loads(self.rfile.read(length))
            texts = _inputs(body.get("input"))
        except (ValueError, TypeError) as exc:
            self._send(400, {"error": {"message": str(exc)}})
            return
        vectors = self.embedder.embed(texts)
        data = [
            {"object": "embedding", "index": i, "embedding": [float(x) for x in row]}
            for i, row in enumerate(vectors)
        ]
        tokens = sum(len(t.split()) for t in texts)
        self._send(
            200,
            {
                "object": "list",
                "data": data,
                "model": body.get("model") or MODEL_NAME,
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            },
        )

    def _send(self, status: int, payload: dict[str, Any]) -> None:
        raw = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: one line per request would drown the Hindsight server's own log."""


def _inputs(value: object) -> list[str]:
    """OpenAI accepts one string or a list of strings (token-id inputs are not supported here)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return list(value)
    raise ValueError("'input' must be a string or a non-empty list of strings")


def serve(port: int, host: str = "127.0.0.1") -> None:
    embedder = MiniLMEmbedder(threads=1)
    embedder.warm()
    handler = type("Handler", (_Handler,), {"embedder": embedder})
    server = ThreadingHTTPServer((host, port), handler)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--host", default="127.0.0.1")
    args = parser.parse_args()
    serve(args.port, args.host)


if __name__ == "__main__":
    main()
