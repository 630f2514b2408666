"""The built-in binlog server (``spark-replica source``): a MySQL-protocol source that serves
its binary log to any number of replicas.

A listener thread (``source-listener``) accepts connections; each gets its own thread
(``source-conn-<id>``), which logs the client in (``auth.py``), answers its statements
(``queries.py``), registers it (COM_REGISTER_SLAVE) and, on COM_BINLOG_DUMP or
COM_BINLOG_DUMP_GTID, becomes its dump thread (``dump.py``) until the replica goes away.

``close`` is the one shutdown path, idempotent: it stops accepting, shuts every connection
down (which ends their reads and writes), closes the binary log (which wakes waiting dump
threads) and joins every thread.
"""

from __future__ import annotations

import itertools
import logging
import os
import socket
import ssl
import struct
import threading
from dataclasses import dataclass, field
from types import TracebackType

from spark_replica.applier_core.receiver.protocol import (
    CACHING_SHA2,
    CLIENT_CONNECT_WITH_DB,
    CLIENT_LONG_FLAG,
    CLIENT_LONG_PASSWORD,
    CLIENT_MULTI_RESULTS,
    CLIENT_PLUGIN_AUTH,
    CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA,
    CLIENT_PROTOCOL_41,
    CLIENT_SECURE_CONNECTION,
    CLIENT_SSL,
    CLIENT_TRANSACTIONS,
    COM_BINLOG_DUMP,
    COM_BINLOG_DUMP_GTID,
    COM_PING,
    COM_QUERY,
    COM_QUIT,
    COM_REGISTER_SLAVE,
    SERVER_STATUS_AUTOCOMMIT,
    PacketStream,
    SourceError,
    eof_packet,
    err_packet,
    lenenc_bytes,
    lenenc_int,
    ok_packet,
    pack_lenenc_int,
)
from spark_replica.tools.source.auth import Account, Authenticator
from spark_replica.tools.source.binlog import SERVER_VERSION, SourceBinlog
from spark_replica.tools.source.dump import BinlogSender, DumpRequest
from spark_replica.tools.source.queries import (
    Replica,
    Result,
    SessionState,
    SourceQueries,
    checksum_aware,
    heartbeat_period,
)

logger = logging.getLogger(__name__)

SERVER_CAPABILITIES = (
    CLIENT_LONG_PASSWORD | CLIENT_LONG_FLAG | CLIENT_CONNECT_WITH_DB | CLIENT_PROTOCOL_41
    | CLIENT_TRANSACTIONS | CLIENT_SECURE_CONNECTION | CLIENT_MULTI_RESULTS | CLIENT_PLUGIN_AUTH
    | CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA
)  # fmt: skip
UTF8MB4_0900_AI_CI = 255
ER_ACCESS_DENIED = 1045
ER_UNKNOWN_COM_ERROR = 1047
ER_HANDSHAKE_ERROR = 1043
_FAST_AUTH_OK = b"\x01\x03"
_FULL_AUTH = b"\x01\x04"
_REQUEST_PUBLIC_KEY = b"\x02"
_VAR_STRING = 253
_LONGLONG = 8


@dataclass(slots=True)
class SourceOptions:
    """How the built-in source runs."""

    server_id: int = 1
    server_uuid: str = ""
    bind: str = "127.0.0.1"
    port: int = 0
    accounts: list[Account] = field(default_factory=list)
    ssl_context: ssl.SSLContext | None = None


class SourceServer:
    """The built-in binlog server (see the module text)."""

    def __init__(self, binlog: SourceBinlog, options: SourceOptions) -> None:
        self.binlog = binlog
        self.options = options
        self.server_uuid = options.server_uuid
        self.authenticator = Authenticator(options.accounts)
        self.queries = SourceQueries(binlog, server_id=options.server_id,
                                     server_uuid=options.server_uuid,
                                     replicas=self.replicas)  # fmt: skip
        self._listener = socket.create_server((options.bind, options.port))
        self.port: int = self._listener.getsockname()[1]
        self._stopping = threading.Event()
        # _lock guards _connections and _replicas.
        self._lock = threading.Lock()
        self._connections: dict[int, _Connection] = {}
        self._replicas: dict[int, Replica] = {}
        self._ids = itertools.count(1)
        self._accepting = threading.Thread(target=self._accept, name="source-listener")
        self._started = False
        self._closed = False

    def __repr__(self) -> str:
        return f"<SourceServer {self.options.bind}:{self.port}>"

    def start(self) -> SourceServer:
        with self._lock:
            if not self._started:
                self._started = True
                self._accepting.start()
        return self

    def __enter__(self) -> SourceServer:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Stop serving and join every thread. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            started = self._started
        self._stopping.set()
        try:
            self._listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._listener.close()
        if started:
            self._accepting.join()
        self.disconnect_all()
        self.binlog.close()
        with self._lock:
            threads = [connection.thread for connection in self._connections.values()]
        for thread in threads:
            thread.join()

    def disconnect_all(self) -> None:
        """Cut every client's connection (the replicas see the source go away)."""
        with self._lock:
            connections = list(self._connections.values())
        for connection in connections:
            connection.stream.abort()

    def replicas(self) -> list[Replica]:
        with self._lock:
            return list(self._replicas.values())

    def connection_count(self) -> int:
        with self._lock:
            return len(self._connections)

    # -- threads ---------------------------------------------------------------------------------

    def _accept(self) -> None:
        while not self._stopping.is_set():
            try:
                sock, address = self._listener.accept()
            except OSError:
                return
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            number = next(self._ids)
            connection = _Connection(self, number, sock, address[0])
            with self._lock:
                if self._stopping.is_set():
                    sock.close()
                    return
                self._connections[number] = connection
            connection.thread.start()

    def _ended(self, number: int) -> None:
        with self._lock:
            connection = self._connections.get(number)
            if connection is not None and not self._stopping.is_set():
                del self._connections[number]
            self._replicas.pop(number, None)

    def _register(self, number: int, replica: Replica) -> None:
        with self._lock:
            self._replicas[number] = replica


class _Connection:
    """One client: login, statements, registration, dump."""

    def __init__(self, server: SourceServer, number: int, sock: socket.socket, host: str):
        self.server = server
        self.number = number
        self.host = host
        self.stream = PacketStream(sock)
        self.stream.read_ahead = False  # until logged in (see PacketStream.read_ahead)
        self.session = SessionState()
        self.user = ""
        self.thread = threading.Thread(target=self._run, name=f"source-conn-{number}")

    def _run(self) -> None:
        try:
            if self._log_in():
                self.stream.read_ahead = True
                self._serve()
        except SourceError:
            pass  # the client went away
        except Exception:  # a bug: end this connection, keep serving the others
            logger.exception("built-in source: connection %d failed", self.number)
        finally:
            try:
                self.stream.sock.close()
            except OSError:
                pass
            self.server._ended(self.number)

    # -- login -----------------------------------------------------------------------------------

    def _log_in(self) -> bool:
        nonce = _nonce()
        self.stream.write_packet(self._greeting(nonce))
        response = self.stream.read_packet()
        flags = struct.unpack_from("<I", response)[0] if len(response) >= 4 else 0
        if len(response) == 32 and flags & CLIENT_SSL:
            context = self.server.options.ssl_context
            if context is None:
                return self._deny_handshake()
            try:
                self.stream.sock = context.wrap_socket(self.stream.sock, server_side=True)
            except (ssl.SSLError, OSError):
                return False
            response = self.stream.read_packet()
        try:
            user, plugin, answer = _parse_response(response)
        except (ValueError, IndexError, struct.error):
            return self._deny_handshake()
        self.user = user
        account = self.server.authenticator.account(user)
        if account is None:
            return self._deny(bool(answer))
        if plugin != account.plugin:
            nonce = _nonce()
            self.stream.write_packet(b"\xfe" + account.plugin.encode() + b"\0" + nonce + b"\0")
            answer = self.stream.read_packet()
            plugin = account.plugin
        if plugin == CACHING_SHA2:
            return self._caching_sha2(account, nonce, answer)
        if not self.server.authenticator.scramble_matches(account, plugin, nonce, answer):
            return self._deny(bool(answer))
        self.stream.write_packet(ok_packet())
        return True

    def _caching_sha2(self, account: Account, nonce: bytes, answer: bytes) -> bool:
        authenticator = self.server.authenticator
        if not account.password:
            if answer:
                return self._deny(True)
            self.stream.write_packet(ok_packet())
            return True
        if not answer:
            return self._deny(False)
        if authenticator.fast_path(account, nonce, answer):
            self.stream.write_packet(_FAST_AUTH_OK)
            self.stream.write_packet(ok_packet())
            return True
        self.stream.write_packet(_FULL_AUTH)
        reply = self.stream.read_packet()
        if isinstance(self.stream.sock, ssl.SSLSocket):
            password = reply.rstrip(b"\0").decode(errors="replace")
        else:
            keys = authenticator.keys()
            if reply == _REQUEST_PUBLIC_KEY:
                self.stream.write_packet(b"\x01" + keys.public_pem)
                reply = self.stream.read_packet()
            try:
                clear = keys.decrypt(reply)
            except ValueError:
                return self._deny(True)
            mask = _repeat(nonce[:20], len(clear))
            unmasked = bytes(a ^ b for a, b in zip(clear, mask, strict=True))
            password = unmasked.rstrip(b"\0").decode(errors="replace")
        if not authenticator.full(account, password):
            return self._deny(True)
        self.stream.write_packet(ok_packet())
        return True

    def _deny(self, using_password: bool) -> bool:
        using = "YES" if using_password else "NO"
        message = f"Access denied for user '{self.user}'@'{self.host}' (using password: {using})"
        self.stream.write_packet(err_packet(ER_ACCESS_DENIED, message, "28000"))
        return False

    def _deny_handshake(self) -> bool:
        self.stream.write_packet(err_packet(ER_HANDSHAKE_ERROR, "Bad handshake", "08S01"))
        return False

    def _greeting(self, nonce: bytes) -> bytes:
        capabilities = SERVER_CAPABILITIES
        if self.server.options.ssl_context is not None:
            capabilities |= CLIENT_SSL
        return (
            b"\x0a" + SERVER_VERSION.encode() + b"\0"
            + struct.pack("<I", self.number) + nonce[:8] + b"\0"
            + struct.pack("<HBHHB", capabilities & 0xFFFF, UTF8MB4_0900_AI_CI,
                          SERVER_STATUS_AUTOCOMMIT, capabilities >> 16, len(nonce) + 1)
            + bytes(10) + nonce[8:] + b"\0" + CACHING_SHA2.encode() + b"\0"
        )  # fmt: skip

    # -- commands --------------------------------------------------------------------------------

    def _serve(self) -> None:
        while not self.server._stopping.is_set():
            packet = self.stream.read_packet()
            if not packet:
                continue
            command, body = packet[0], packet[1:]
            if command == COM_QUIT:
                return
            if command == COM_QUERY:
                self._query(body.decode(errors="replace"))
            elif command == COM_PING:
                self.stream.write_packet(ok_packet())
            elif command == COM_REGISTER_SLAVE:
                self._register(body)
            elif command in (COM_BINLOG_DUMP, COM_BINLOG_DUMP_GTID):
                self._dump(command, body)
                return
            else:
                self.stream.write_packet(
                    err_packet(ER_UNKNOWN_COM_ERROR, "Unknown command", "08S01")
                )

    def _query(self, sql: str) -> None:
        try:
            result = self.server.queries.run(sql, self.session)
        except SourceError as exc:
            self.stream.write_packet(err_packet(exc.code, exc.message, exc.sqlstate))
            return
        if not result.columns:
            self.stream.write_packet(ok_packet())
            return
        self._result_set(result)

    def _result_set(self, result: Result) -> None:
        out = bytearray(self.stream.frame(pack_lenenc_int(len(result.columns))))
        for index, name in enumerate(result.columns):
            numeric = bool(result.rows) and isinstance(result.rows[0][index], int)
            out += self.stream.frame(_column_definition(name, numeric))
        out += self.stream.frame(eof_packet())
        for row in result.rows:
            out += self.stream.frame(b"".join(
                b"\xfb" if value is None else lenenc_bytes(str(value).encode()) for value in row
            ))  # fmt: skip
        out += self.stream.frame(eof_packet())
        self.stream.sock_send(out)

    def _register(self, body: bytes) -> None:
        try:
            (server_id,) = struct.unpack_from("<I", body)
            pos = 4
            host_length = body[pos]
            host = body[pos + 1 : pos + 1 + host_length].decode(errors="replace")
            pos += 1 + host_length
            pos += 1 + body[pos]  # user
            pos += 1 + body[pos]  # password
            (port,) = struct.unpack_from("<H", body, pos)
        except (IndexError, struct.error):
            self.stream.write_packet(err_packet(1835, "Malformed communication packet."))
            return
        uuid = str(self.session.user_variables.get("replica_uuid")
                   or self.session.user_variables.get("slave_uuid") or "")  # fmt: skip
        self.server._register(self.number, Replica(server_id, host or self.host, port, uuid))
        self.stream.write_packet(ok_packet())

    def _dump(self, command: int, body: bytes) -> None:
        self.thread.name = f"source-dump-{self.number}"
        session = {
            "heartbeat_period": heartbeat_period(self.session),
            "checksum_aware": checksum_aware(self.session),
        }
        try:
            if command == COM_BINLOG_DUMP_GTID:
                request = DumpRequest.binlog_dump_gtid(body, **session)
            else:
                request = DumpRequest.binlog_dump(body, **session)
            sender = BinlogSender(self.server.binlog, self.stream, request,
                                  server_uuid=self.server.server_uuid,
                                  stopping=self.server._stopping)  # fmt: skip
            sender.run()
        except SourceError as exc:
            if exc.code != 2013:
                self.stream.write_packet(err_packet(exc.code, exc.message, exc.sqlstate))


def _repeat(data: bytes, length: int) -> bytes:
    return (data * (length // len(data) + 1))[:length]


def _nonce() -> bytes:
    """20 random printable bytes (no NUL: the greeting ends the nonce with one)."""
    return bytes(33 + byte % 94 for byte in os.urandom(20))


def _parse_response(packet: bytes) -> tuple[str, str, bytes]:
    """HandshakeResponse41: the user, the plugin named, and the auth answer."""
    flags = struct.unpack_from("<I", packet)[0]
    pos = 32
    end = packet.index(b"\0", pos)
    user = packet[pos:end].decode()
    pos = end + 1
    if flags & CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA:
        length, pos = lenenc_int(packet, pos)
    else:
        length, pos = packet[pos], pos + 1
    answer = packet[pos : pos + length]
    pos += length
    if flags & CLIENT_CONNECT_WITH_DB and pos < len(packet):
        pos = packet.index(b"\0", pos) + 1
    plugin = CACHING_SHA2
    if flags & CLIENT_PLUGIN_AUTH and pos < len(packet):
        end = packet.find(b"\0", pos)
        plugin = packet[pos : end if end >= 0 else None].decode() or plugin
    return user, plugin, answer


def _column_definition(name: str, numeric: bool) -> bytes:
    raw = name.encode()
    kind, charset, length = (_LONGLONG, 63, 21) if numeric else (_VAR_STRING, 255, 1 << 20)
    return (
        lenenc_bytes(b"def") + lenenc_bytes(b"") + lenenc_bytes(b"") + lenenc_bytes(b"")
        + lenenc_bytes(raw) + lenenc_bytes(raw) + b"\x0c"
        + struct.pack("<HIBHB", charset, length, kind, 0, 0) + b"\0\0"
    )  # fmt: skip
