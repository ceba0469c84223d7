"""A real Matrix homeserver (Synapse, SQLite, loopback) for delivery tests, with users and a room.

Synapse lives in its own venv (``scripts/matrix-env.sh`` makes ``.matrix/``; ``RECALLOPS_MATRIX_VENV``
points elsewhere). The fixture writes a config with one loopback listener, no federation, no key
servers and no rate limits, registers users through the shared-secret admin API, and reads messages
back with the client-server API, as any Matrix client would.
"""

import hashlib
import hmac
import os
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import yaml

from tests.support.net import free_port, wait_for

ROOT = Path(__file__).resolve().parents[2]
VENV = Path(os.environ.get("RECALLOPS_MATRIX_VENV", ROOT / ".matrix"))
SERVER_NAME = "recallops.test"
SHARED_SECRET = "matrix-test-registration-secret"
_UNLIMITED = {"per_second": 10000, "burst_count": 10000}


@dataclass
class MatrixServer:
    port: int
    directory: Path
    process: subprocess.Popen[bytes] | None = None
    tokens: dict[str, str] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def register(self, user: str, password: str) -> str:
        """A new account through the shared-secret admin API; returns its access token."""
        nonce = httpx.get(f"{self.url}/_synapse/admin/v1/register", timeout=10).json()["nonce"]
        mac = hmac.new(SHARED_SECRET.encode(), digestmod=hashlib.sha1)
        mac.update(b"\x00".join([nonce.encode(), user.encode(), password.encode(), b"notadmin"]))
        response = httpx.post(
            f"{self.url}/_synapse/admin/v1/register",
            json={
                "nonce": nonce,
                "username": user,
                "password": password,
                "admin": False,
                "mac": mac.hexdigest(),
            },
            timeout=30,
        )
        response.raise_for_status()
        token = str(response.json()["access_token"])
        self.tokens[user] = token
        return token

    def _client(self, user: str) -> httpx.Client:
        return httpx.Client(
            base_url=f"{self.url}/_matrix/client/v3",
            headers={"Authorization": f"Bearer {self.tokens[user]}"},
            timeout=30,
        )

    def create_public_room(self, owner: str, alias: str) -> str:
        """A public room with ``#alias:recallops.test`` that anyone may join; returns its id."""
        with self._client(owner) as client:
            response = client.post(
                "/createRoom", json={"preset": "public_chat", "room_alias_name": alias, "name": alias}
            )
            response.raise_for_status()
            return str(response.json()["room_id"])

    def messages(self, reader: str, room_id: str) -> list[dict[str, Any]]:
        """Every ``m.room.message`` in the room, oldest first, as the client-server API returns them."""
        with self._client(reader) as client:
            response = client.get(
                f"/rooms/{quote(room_id, safe='')}/messages", params={"dir": "b", "limit": 100}
            )
            response.raise_for_status()
            events = response.json().get("chunk", [])
        return [event for event in reversed(events) if event.get("type") == "m.room.message"]

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


def _config(directory: Path, port: int) -> Path:
    path = directory / "homeserver.yaml"
    python = VENV / "bin" / "python"
    subprocess.run(
        [
            str(python),
            "-m",
            "synapse.app.homeserver",
            "--server-name",
            SERVER_NAME,
            "--config-path",
            str(path),
            "--data-directory",
            str(directory),
            "--generate-config",
            "--report-stats=no",
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    config = yaml.safe_load(path.read_text())
    config.update(
        {
            "listeners": [
                {
                    "port": port,
                    "bind_addresses": ["127.0.0.1"],
                    "type": "http",
                    "tls": False,
                    "x_forwarded": False,
                    "resources": [{"names": ["client"], "compress": False}],
                }
            ],
            "database": {"name": "sqlite3", "args": {"database": str(directory / "homeserver.db")}},
            "registration_shared_secret": SHARED_SECRET,
            "enable_registration": False,
            "trusted_key_servers": [],
            "suppress_key_server_warning": True,
            "federation_domain_whitelist": [],
            "public_baseurl": f"http://127.0.0.1:{port}/",
            "rc_message": _UNLIMITED,
            "rc_login": {"address": _UNLIMITED, "account": _UNLIMITED, "failed_attempts": _UNLIMITED},
            "rc_registration": _UNLIMITED,
            "rc_joins": {"local": _UNLIMITED, "remote": _UNLIMITED},
            "log_config": None,
            "report_stats": False,
        }
    )
    config.pop("log_config")
    path.write_text(yaml.safe_dump(config))
    return path


@contextmanager
def running_matrix(*, timeout: float = 120.0) -> Iterator[MatrixServer]:
    python = VENV / "bin" / "python"
    if not python.exists():
        raise RuntimeError(f"no Synapse venv at {VENV}: run scripts/matrix-env.sh (make matrix-env)")
    with tempfile.TemporaryDirectory(prefix="recallops-matrix-") as tmp:
        directory = Path(tmp)
        port = free_port()
        config = _config(directory, port)
        log = (directory / "synapse.log").open("ab")
        server = MatrixServer(port=port, directory=directory)
        server.process = subprocess.Popen(
            [str(python), "-m", "synapse.app.homeserver", "--config-path", str(config)],
            cwd=directory,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:

            def up() -> bool:
                assert server.process is not None
                if server.process.poll() is not None:
                    raise RuntimeError((directory / "synapse.log").read_text(errors="replace")[-3000:])
                try:
                    return httpx.get(f"{server.url}/_matrix/client/versions", timeout=2).status_code == 200
                except httpx.HTTPError:
                    return False

            wait_for(up, timeout=timeout, interval=0.2, what="Synapse up")
            yield server
        finally:
            server.stop()
            log.close()
