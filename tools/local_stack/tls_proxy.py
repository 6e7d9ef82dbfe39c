"""A TLS-terminating proxy: HTTPS in front of an emulator that speaks only HTTP (moto, ElasticMQ,
dynalite), with a server certificate from a test CA (tools/fake_bank/pki.py), so the client's
whole TLS path (CA verification, SNI, the handshake on every new connection) is exercised.

    proxy = TlsProxy("127.0.0.1", moto_port, pki.server_cert, pki.server_key)
    env["AWS_ENDPOINT_URL_SQS"] = proxy.url            # https://127.0.0.1:<port>
    ...
    proxy.handshakes, proxy.refused                    # completed / failed handshakes

Bytes are relayed unchanged (the emulators ignore the Host header's port). Runs an asyncio loop
on a daemon thread of the calling process: one SSL object per connection, read and written from
that one loop, which OpenSSL needs (two threads on one SSL socket are not safe).
"""

from __future__ import annotations

import asyncio
import ssl
import threading
from pathlib import Path


class TlsProxy:
    def __init__(self, target_host: str, target_port: int, cert: Path, key: Path, listen_host: str = "127.0.0.1") -> None:
        self.target = (target_host, target_port)
        self._context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self._context.load_cert_chain(str(cert), str(key))
        self.handshakes = 0  # connections whose handshake completed
        self.refused = 0  # handshakes that failed (e.g. the client did not trust the certificate)
        self.handshake_errors: list[str] = []
        self._loop = asyncio.new_event_loop()
        self._started = threading.Event()
        self._server: asyncio.AbstractServer | None = None
        self._thread = threading.Thread(target=self._run, args=(listen_host,), name="tls-proxy", daemon=True)
        self._thread.start()
        if not self._started.wait(10):
            raise RuntimeError("tls proxy did not start")
        self.port: int = self._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"https://{listen_host}:{self.port}"

    def _run(self, listen_host: str) -> None:
        asyncio.set_event_loop(self._loop)
        self._server = self._loop.run_until_complete(asyncio.start_server(self._accept, listen_host, 0, backlog=128))
        self._started.set()
        self._loop.run_forever()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        # The handshake is ours, not start_server's: a failed one is counted, not just logged.
        try:
            await writer.start_tls(self._context)
        except (ssl.SSLError, OSError) as e:
            self.refused += 1
            self.handshake_errors.append(str(e))
            writer.transport.abort()
            return
        self.handshakes += 1
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.transport.abort()
            return
        await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))

    async def _pipe(self, source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        try:
            while chunk := await source.read(65536):
                sink.write(chunk)
                await sink.drain()
        except (OSError, ssl.SSLError):
            pass
        finally:
            sink.transport.abort()

    def close(self) -> None:
        async def shutdown() -> None:
            assert self._server is not None
            self._server.close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(shutdown(), self._loop).result(5)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        self._loop.close()
