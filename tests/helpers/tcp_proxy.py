"""A TCP proxy that forwards a client to a server and can cut the connection after a given
number of bytes from the server: a source that goes away in the middle of a transaction."""

from __future__ import annotations

import socket
import threading
from types import TracebackType


class CuttingProxy:
    """Listens on 127.0.0.1 (``port``) and forwards each connection to ``target``.

    ``cut_after(n)``: once ``n`` more bytes have gone from the server to the client, every
    connection open then is closed (later ones are forwarded whole).
    """

    def __init__(self, host: str, port: int) -> None:
        self._target = (host, port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        # _lock guards _budget and _pairs.
        self._lock = threading.Lock()
        self._budget: int | None = None
        self._pairs: list[tuple[socket.socket, socket.socket]] = []
        self._threads: list[threading.Thread] = []
        self.cut = threading.Event()
        self._accepting = threading.Thread(target=self._accept, name="proxy-accept")
        self._accepting.start()

    def __enter__(self) -> CuttingProxy:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def cut_after(self, count: int) -> None:
        with self._lock:
            self._budget = count
        self.cut.clear()

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
            for source, sink, counted in ((client, server, False), (server, client, True)):
                pump = threading.Thread(target=self._pump, args=(source, sink, counted),
                                        name="proxy-pump")  # fmt: skip
                self._threads.append(pump)
                pump.start()

    def _pump(self, source: socket.socket, sink: socket.socket, counted: bool) -> None:
        while True:
            try:
                data = source.recv(1 << 16)
            except OSError:
                data = b""
            if not data:
                _close(source, sink)
                return
            if counted:
                with self._lock:
                    budget = self._budget
                    if budget is not None and len(data) > budget:
                        data = data[:budget]
                        self._budget = None
                        cut = True
                    else:
                        self._budget = None if budget is None else budget - len(data)
                        cut = False
                if cut:
                    _send(sink, data)
                    _close(source, sink)
                    self.cut.set()
                    return
            if not _send(sink, data):
                _close(source, sink)
                return


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


class DamagingProxy:
    """Forwards one client to ``target`` at a time, packet by packet from the server, and
    damages one packet on request: ``damage(after, where)`` changes one byte of the first
    packet of over 100 bytes that comes once ``after`` more such packets have passed, then
    forwards everything intact again. ``where``: ``"body"`` (a byte in the middle of the
    payload), ``"length"`` (the event's own length field, past the OK byte) or ``"marker"``
    (the packet's first byte, which says what the packet is). ``damaged`` is set once done.
    """

    def __init__(self, host: str, port: int) -> None:
        self._target = (host, port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._lock = threading.Lock()  # guards _plan and _pairs
        self._plan: tuple[int, str] | None = None
        self._pairs: list[tuple[socket.socket, socket.socket]] = []
        self._threads: list[threading.Thread] = []
        self.damaged = threading.Event()
        self._accepting = threading.Thread(target=self._accept, name="proxy-accept")
        self._accepting.start()

    def __enter__(self) -> DamagingProxy:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def damage(self, after: int, where: str) -> None:
        with self._lock:
            self._plan = (after, where)

    def close(self) -> None:
        try:
            self._listener.shutdown(socket.SHUT_RDWR)
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
            upstream = threading.Thread(target=self._forward, args=(client, server),
                                        name="proxy-pump")  # fmt: skip
            downstream = threading.Thread(target=self._packets, args=(server, client),
                                          name="proxy-pump")  # fmt: skip
            self._threads += [upstream, downstream]
            upstream.start()
            downstream.start()

    def _forward(self, source: socket.socket, sink: socket.socket) -> None:
        while True:
            try:
                data = source.recv(1 << 16)
            except OSError:
                data = b""
            if not data or not _send(sink, data):
                _close(source, sink)
                return

    def _packets(self, source: socket.socket, sink: socket.socket) -> None:
        while True:
            header = _recv_exact(source, 4)
            payload = (
                None
                if header is None
                else _recv_exact(source, int.from_bytes(header[:3], "little"))
            )
            if header is None or payload is None:
                _close(source, sink)
                return
            if len(payload) > 100:
                payload = self._maybe_damage(payload)
            if not _send(sink, header + payload):
                _close(source, sink)
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
