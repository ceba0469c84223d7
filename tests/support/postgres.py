"""A throwaway PostgreSQL cluster from Debian's packages, run as an unprivileged user on a free port."""

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg

from tests.support.net import free_port, wait_for

PG_USER = "postgres"


def _bin_dir() -> Path:
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not candidates:
        raise RuntimeError("PostgreSQL server binaries not found: install Debian's 'postgresql' package")
    return Path(candidates[-1]).parent


def _as_user(args: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return args
    return ["runuser", "-u", PG_USER, "--", *args]


@contextmanager
def postgres_cluster() -> Iterator[str]:
    """Yield a SQLAlchemy URL of a fresh, empty database; stop and remove the cluster afterwards."""
    bindir = _bin_dir()
    root = Path(tempfile.mkdtemp(prefix="recallops-pg-"))
    data = root / "data"
    if os.geteuid() == 0:
        entry = pwd.getpwnam(PG_USER)
        os.chown(root, entry.pw_uid, entry.pw_gid)
    port = free_port()
    subprocess.run(
        _as_user([str(bindir / "initdb"), "-D", str(data), "-U", "recallops", "--auth=trust", "-E", "UTF8"]),
        check=True,
        capture_output=True,
    )
    options = f"-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories={root} -c fsync=off"
    subprocess.run(
        _as_user([str(bindir / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(root / "log"), "start"]),
        check=True,
        capture_output=True,
    )
    try:
        dsn = f"postgresql://recallops@127.0.0.1:{port}/postgres"
        wait_for(lambda: psycopg.connect(dsn, connect_timeout=2).close() or True, timeout=30, what="postgres")
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("CREATE DATABASE recallops")
        yield f"postgresql://recallops@127.0.0.1:{port}/recallops"
    finally:
        stop = [str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]
        subprocess.run(_as_user(stop), capture_output=True)
        shutil.rmtree(root, ignore_errors=True)
