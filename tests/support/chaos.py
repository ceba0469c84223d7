"""Loopback webhook receivers that misbehave the way real ones do: drip, hang, or rate-limit nonsense.

- ``drip``: reads the request, sends a status line and headers promising a body, then one byte every
  ``drip_s`` seconds for as long as the sender stays;
- ``hang``: reads the request and never answers;
- ``nan``: answers ``429`` with ``Retry-After: nan`` and an error body full of control characters;
- ``silent``: accepts a connection and never says a word (an SMTP server that never greets).

Each counts the connections it accepted, the requests it read and the connections still open, so a
test can wait on them.
"""

import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Literal

from tests.support.net import free_port

Mode = Literal["drip", "hang", "nan", "silent"]
NAN_BODY = b"slow down\x1b[31m\r\n\x00" + b"x" * 5000


@dataclass
class ChaosReceiver:
    mode: Mode
    drip_s: float = 3.0
    port: int = 0
    accepted: int = 0
    requests: int = 0
    open_connections: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)
    _socket: socket.socket | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hook/{self.mode}-path-secret?token={self.mode}-query-secret"

    def start(self) -> "ChaosReceiver":
        self.port = self.port or free_port()
        listener = socket.create_server(("127.0.0.1", self.port))
        listener.settimeout(0.2)
        self._socket = listener
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._socket is not None:
            self._socket.close()

    def _accept(self) -> None:
        assert self._socket is not None
        while not self._stop.is_set():
            try:
                conn, _ = self._socket.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with self._lock:
            self.accepted += 1
            self.open_connections += 1
        try:
            with conn:
                if self.mode == "silent":
                    self._hold(conn)
                    return
                if not _read_request(conn):
                    return
                with self._lock:
                    self.requests += 1
                if self.mode == "nan":
                    conn.sendall(
                        b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: nan\r\nConnection: close\r\n"
                        + f"Content-Length: {len(NAN_BODY)}\r\n\r\n".encode()
                        + NAN_BODY
                    )
                elif self.mode == "drip":
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n")
                    while not self._stop.wait(self.drip_s):
                        conn.sendall(b".")
                else:
                    self._hold(conn)
        except OSError:
            return  # the sender gave up and closed: what a deadline is for
        finally:
            with self._lock:
                self.open_connections -= 1

    def _hold(self, conn: socket.socket) -> None:
        """Keep the connection open, saying nothing, until the sender leaves or the receiver stops."""
        while not self._stop.wait(0.2) and _peer_open(conn):
            pass


def _read_request(conn: socket.socket) -> bool:
    """Read one request's head and its Content-Length body; False if the peer left first."""
    conn.settimeout(10)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return False
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    deadline = time.monotonic() + 10
    while len(body) < length and time.monotonic() < deadline:
        chunk = conn.recv(65536)
        if not chunk:
            return False
        body += chunk
    conn.settimeout(None)
    return True


def _peer_open(conn: socket.socket) -> bool:
    conn.setblocking(False)
    try:
        return conn.recv(1, socket.MSG_PEEK) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        conn.setblocking(True)
