"""The real storage emulators the remote-index tests run against, started by the tests.

* Azure: Azurite (the official emulator, npm package ``azurite``), installed by ``.ci/run`` with
  ``npm install azurite`` into ``${TMPDIR:-/tmp}/graphrag-audit-ci/azurite``; ``GRAPHRAG_AUDIT_AZURITE``
  names another install folder (the one holding ``node_modules``).
* S3: moto's server mode (PyPI ``moto[server]``, in the test extra), ``python -m moto.server``.

Each runs on a free local port, in memory. Without one a test skips with the reason, except under
CI (``CI=true``), where it fails: a green CI has always read from both emulators.

:class:`Proxy` sits between the tool and an emulator to make faults happen at a known moment: a
server that never answers, or an emulator stopped in the middle of a read.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

#: Azurite's well-known development account (public, in Azure's documentation)
AZURITE_ACCOUNT = "devstoreaccount1"
AZURITE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
S3_KEY_ID, S3_SECRET = "graphrag-audit-test", "graphrag-audit-test-secret"


def under_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def unavailable(reason: str):
    if under_ci():
        pytest.fail(f"CI=true but {reason}: .ci/run must install and start the storage emulators")
    pytest.skip(reason)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_port(port: int, proc: subprocess.Popen, what: str, timeout: float = 60) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            unavailable(f"{what} exited at start (code {proc.returncode})")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    proc.kill()
    unavailable(f"{what} did not listen on port {port} within {timeout:.0f} s")


def azurite_binary() -> Path | None:
    base = os.environ.get("GRAPHRAG_AUDIT_AZURITE") or os.path.join(
        os.environ.get("TMPDIR") or tempfile.gettempdir(), "graphrag-audit-ci", "azurite"
    )
    exe = Path(base) / "node_modules" / ".bin" / "azurite-blob"
    return exe if exe.is_file() else None


class Emulator:
    def __init__(self, proc: subprocess.Popen, port: int, workdir: str):
        self.proc, self.port, self.workdir = proc, port, workdir

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        shutil.rmtree(self.workdir, ignore_errors=True)


class Azurite(Emulator):
    def connection_string(self, port: int | None = None, key: str = AZURITE_KEY) -> str:
        return (
            f"DefaultEndpointsProtocol=http;AccountName={AZURITE_ACCOUNT};AccountKey={key};"
            f"BlobEndpoint=http://127.0.0.1:{port or self.port}/{AZURITE_ACCOUNT};"
        )

    def env(self, port: int | None = None, key: str = AZURITE_KEY) -> dict:
        return {"AZURE_STORAGE_CONNECTION_STRING": self.connection_string(port, key)}

    def fs(self):
        import adlfs

        return adlfs.AzureBlobFileSystem(connection_string=self.connection_string(), skip_instance_cache=True)


class MotoS3(Emulator):
    def env(self, port: int | None = None) -> dict:
        return {
            "AWS_ENDPOINT_URL": f"http://127.0.0.1:{port or self.port}",
            "AWS_ACCESS_KEY_ID": S3_KEY_ID,
            "AWS_SECRET_ACCESS_KEY": S3_SECRET,
            "AWS_DEFAULT_REGION": "us-east-1",
        }

    def fs(self):
        import s3fs

        return s3fs.S3FileSystem(
            key=S3_KEY_ID,
            secret=S3_SECRET,
            endpoint_url=f"http://127.0.0.1:{self.port}",
            skip_instance_cache=True,
        )


def start_azurite() -> Azurite:
    try:
        import adlfs  # noqa: F401
    except ImportError:
        unavailable("adlfs is not installed (pip install '.[test]')")
    exe = azurite_binary()
    if exe is None or shutil.which("node") is None:
        unavailable(
            "Azurite is not installed (npm install azurite into ${TMPDIR:-/tmp}/graphrag-audit-ci/azurite, "
            "or set GRAPHRAG_AUDIT_AZURITE), or node is missing"
        )
    port = free_port()
    work = tempfile.mkdtemp(prefix="graphrag-audit-azurite-")
    proc = subprocess.Popen(
        [
            str(exe),
            "--blobHost",
            "127.0.0.1",
            "--blobPort",
            str(port),
            "--inMemoryPersistence",
            "--skipApiVersionCheck",
            "--loose",
            "--disableTelemetry",
            "--silent",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        cwd=work,
    )
    _wait_port(port, proc, "Azurite")
    return Azurite(proc, port, work)


def start_moto(*, auth: bool = False) -> MotoS3:
    try:
        import moto.server  # noqa: F401
        import s3fs  # noqa: F401
    except ImportError:
        unavailable("moto[server] or s3fs is not installed (pip install '.[test]')")
    port = free_port()
    work = tempfile.mkdtemp(prefix="graphrag-audit-moto-")
    env = dict(os.environ)
    if auth:  # moto checks every request's access key (none is known to it: any key is wrong)
        env["INITIAL_NO_AUTH_ACTION_COUNT"] = "0"
    proc = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        cwd=work,
        env=env,
    )
    _wait_port(port, proc, "moto server")
    return MotoS3(proc, port, work)


class Proxy:
    """A TCP proxy on a free port in front of ``upstream_port``.

    ``stall``: accept and read requests but never answer (a server too slow to answer).
    ``after_bytes``/``action``: once that many response bytes went to the client, call ``action``
    (stop the emulator) and drop every open connection. ``sent``: the response bytes so far."""

    def __init__(
        self, upstream_port: int, *, stall: bool = False, after_bytes: int | None = None, action=None
    ):
        self.upstream, self.stall, self.after, self.action = upstream_port, stall, after_bytes, action
        self.sent = 0
        self.fired = threading.Event()
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(32)
        self.port = self.sock.getsockname()[1]
        self.conns: list[socket.socket] = []
        self.lock = threading.Lock()
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.closed:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            with self.lock:
                self.conns.append(client)
            if self.stall:
                threading.Thread(target=self._drain, args=(client,), daemon=True).start()
                continue
            try:
                up = socket.create_connection(("127.0.0.1", self.upstream), timeout=5)
                up.settimeout(None)
            except OSError:
                client.close()
                continue
            with self.lock:
                self.conns.append(up)
            threading.Thread(target=self._pump, args=(client, up, False), daemon=True).start()
            threading.Thread(target=self._pump, args=(up, client, True), daemon=True).start()

    @staticmethod
    def _drain(client):
        try:
            while client.recv(65536):
                pass
        except OSError:
            pass

    def _pump(self, src, dst, downstream):
        try:
            while True:
                data = src.recv(16384)
                if not data:
                    break
                if downstream and self.after is not None and self.fired.is_set():
                    break
                dst.sendall(data)
                if downstream:
                    with self.lock:
                        self.sent += len(data)
                        fire = self.after is not None and self.sent >= self.after and not self.fired.is_set()
                        if fire:
                            self.fired.set()
                    if fire:
                        if self.action is not None:
                            self.action()
                        self.drop()
                        break
        except OSError:
            pass
        finally:
            for s in (src, dst):
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()

    def drop(self):
        with self.lock:
            conns, self.conns = self.conns, []
        for s in conns:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def close(self):
        self.closed = True
        self.sock.close()
        self.drop()
