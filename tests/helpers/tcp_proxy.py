"""TCP proxies between a replica and its source that misbehave on request: one cuts the
connection after a given number of bytes from the server (a source that goes away in the
middle of a transaction), one damages a packet (a network that corrupts data)."""

from __future__ import annotations

import socket
import threading
from types import TracebackType


class _Proxy:
    """Listens on 127.0.0.1 (``port``) and forwards each connection to ``target``: client to
    server as it comes, server to client through ``_downstream``. ``close`` ends every
    connection and joins every thread."""

    def __init__(self, host: str, port: int) -> None:
        self._target = (host, port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        # _lock guards _pairs and the subclass's plan.
        self._lock = threading.Lock()
        self._pairs: list[tuple[socket.socket, socket.socket]] = []
        self._threads: list[threading.Thread] = []
        self._accepting = threading.Thread(target=self._accept, name="proxy-accept")
        self._accepting.start()

    def __enter__(self) -> _Proxy:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        try:
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes the accepting thread
        except OSError:
            pass
        self._listener.close()
        self._accepting.join()
        with self._lock:
            pairs, self._pairs = self._pairs, []
        for client, server in pairs:
            _close(client, server)
        for thread in self._threads:
            thread.join()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            server = socket.create_connection(self._target)
            with self._lock:
                self._pairs.append((client, server))
            for target, args in (
                (_forward, (client, server)),
                (self._downstream, (server, client)),
            ):
                pump = threading.Thread(target=target, args=args, name="proxy-pump")
                self._threads.append(pump)
                pump.start()

    def _downstream(self, server: socket.socket, client: socket.socket) -> None:
        _forward(server, client)


class CuttingProxy(_Proxy):
    """``cut_after(n)``: once ``n`` more bytes have gone from the server to the client, every
    connection open then is closed (later ones are forwarded whole); ``cut`` is set then."""

    def __init__(self, host: str, port: int) -> None:
        self._budget: int | None = None
        self.cut = threading.Event()
        super().__init__(host, port)

    def __enter__(self) -> CuttingProxy:
        return self

    def cut_after(self, count: int) -> None:
        with self._lock:
            self._budget = count
        self.cut.clear()

    def _downstream(self, server: socket.socket, client: socket.socket) -> None:
        while True:
            try:
                data = server.recv(1 << 16)
            except OSError:
                data = b""
            if not data:
                _close(server, client)
                return
            with self._lock:
                budget = self._budget
                cut = budget is not None and len(data) > budget
                if cut:
                    data, self._budget = data[:budget], None
                elif budget is not None:
                    self._budget = budget - len(data)
            if cut:
                _send(client, data)
                _close(server, client)
                self.cut.set()
                return
            if not _send(client, data):
                _close(server, client)
                return


class DamagingProxy(_Proxy):
    """Forwards the server's packets one by one and damages one on request: ``damage(after,
    where)`` changes one byte of the first packet of over 100 bytes that comes once ``after``
    more such packets have passed, then forwards everything intact again. ``where``:
    ``"body"`` (a byte in the middle of the payload), ``"length"`` (the event's own length
    field, past the OK byte) or ``"marker"`` (the packet's first byte, which says what the
    packet is). ``damaged`` is set once done.
    """

    def __init__(self, host: str, port: int) -> None:
        self._plan: tuple[int, str] | None = None
        self.damaged = threading.Event()
        super().__init__(host, port)

    def __enter__(self) -> DamagingProxy:
        return self

    def damage(self, after: int, where: str) -> None:
        with self._lock:
            self._plan = (after, where)

    def _downstream(self, server: socket.socket, client: socket.socket) -> None:
        while True:
            header = _recv_exact(server, 4)
            size = 0 if header is None else int.from_bytes(header[:3], "little")
            payload = None if header is None else _recv_exact(server, size)
            if header is None or payload is None:
                _close(server, client)
                return
            if len(payload) > 100:
                payload = self._maybe_damage(payload)
            if not _send(client, header + payload):
                _close(server, client)
                return

    def _maybe_damage(self, payload: bytes) -> bytes:
        with self._lock:
            if self._plan is None:
                return payload
            after, where = self._plan
            if after > 0:
                self._plan = (after - 1, where)
                return payload
            self._plan = None
        at = {"body": len(payload) // 2, "length": 1 + 9, "marker": 0}[where]
        damaged = bytearray(payload)
        damaged[at] = 0x42 if where == "marker" else damaged[at] ^ 0x5A
        self.damaged.set()
        return bytes(damaged)


def _forward(source: socket.socket, sink: socket.socket) -> None:
    while True:
        try:
            data = source.recv(1 << 16)
        except OSError:
            data = b""
        if not data or not _send(sink, data):
            _close(source, sink)
            return


def _recv_exact(sock: socket.socket, size: int) -> bytes | None:
    data = bytearray()
    while len(data) < size:
        try:
            chunk = sock.recv(size - len(data))
        except OSError:
            return None
        if not chunk:
            return None
        data += chunk
    return bytes(data)


def _send(sink: socket.socket, data: bytes) -> bool:
    try:
        sink.sendall(data)
    except OSError:
        return False
    return True


def _close(*sockets: socket.socket) -> None:
    for sock in sockets:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        sock.close()
