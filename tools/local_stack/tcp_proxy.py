"""A TCP proxy in front of an emulator, to take a dependency away without losing its data.

Killing or SIGSTOPping moto takes SQS with it (one process serves both) or wipes the table
(a restart); an outage of the idempotency store alone is this proxy in front of the DynamoDB
endpoint (`AWS_ENDPOINT_URL_DYNAMODB`), switched to `refuse` (every open connection is cut and
new ones are closed at once: the client sees resets, as from a load balancer with no healthy
target) or `blackhole` (connections are accepted and never answered: the client's own timeout
decides), then back to `forward`. Runs on threads of the calling process.
"""

from __future__ import annotations

import socket
import threading
from typing import Literal

Mode = Literal["forward", "refuse", "blackhole"]


class TcpProxy:
    def __init__(self, target_host: str, target_port: int, listen_host: str = "127.0.0.1") -> None:
        self.target = (target_host, target_port)
        self._listener = socket.create_server((listen_host, 0), backlog=128)
        self.port = self._listener.getsockname()[1]
        self.url = f"http://{listen_host}:{self.port}"
        self._mode: Mode = "forward"
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._closed = threading.Event()
        self.refused = 0  # connections cut or closed while not forwarding
        self._thread = threading.Thread(target=self._accept, name="tcp-proxy", daemon=True)
        self._thread.start()

    @property
    def mode(self) -> Mode:
        return self._mode

    def set_mode(self, mode: Mode) -> None:
        """Switch; leaving `forward` cuts every connection in flight (keep-alive ones too)."""
        with self._lock:
            self._mode = mode
            if mode != "forward":
                for s in list(self._open):
                    self._cut(s)
                self._open.clear()

    def _cut(self, s: socket.socket) -> None:
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        s.close()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            with self._lock:
                mode = self._mode
                if mode == "refuse":
                    self.refused += 1
                    # SO_LINGER 0: a reset, not an orderly close the client might read as an answer.
                    client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                    client.close()
                    continue
                self._open.add(client)
            if mode == "blackhole":
                self.refused += 1
                continue  # held open, never read: cut when the mode changes or at close()
            threading.Thread(target=self._connect, args=(client,), daemon=True).start()

    def _connect(self, client: socket.socket) -> None:
        try:
            upstream = socket.create_connection(self.target, timeout=5)
        except OSError:
            self._drop(client)
            return
        upstream.settimeout(None)
        with self._lock:
            if self._mode != "forward":
                self._open.discard(client)
                self._cut(client)
                upstream.close()
                return
            self._open.add(upstream)
        threading.Thread(target=self._pipe, args=(upstream, client), daemon=True).start()
        self._pipe(client, upstream)

    def _pipe(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while chunk := source.recv(65536):
                sink.sendall(chunk)
        except OSError:
            pass
        finally:
            self._drop(source)
            self._drop(sink)

    def _drop(self, s: socket.socket) -> None:
        with self._lock:
            self._open.discard(s)
        self._cut(s)

    def close(self) -> None:
        self._closed.set()
        self._listener.close()
        self.set_mode("refuse")
