"""The client side of the MySQL protocol, as a replica's receiver speaks it to its source.

``SourceClient.connect`` opens a TCP connection, reads the server's handshake (protocol 10)
and logs in with ``mysql_native_password`` or ``caching_sha2_password`` (its fast path),
following an authentication switch when the server asks for another plugin. ``query`` runs a
statement through COM_QUERY and returns a text result set; ``command`` sends any other command
packet. Every failure is a ``SourceError`` with MySQL's number, SQLSTATE and message: the
server's own ERR packets as they come, and the client errors a MySQL replica shows in
Last_IO_Error for connection problems (2003, 2005, 2013, 2061).

Packets are framed as the protocol says: a 3-byte little-endian length, a sequence number,
the payload; a payload of 2^24-1 bytes or more goes in several packets.
"""

from __future__ import annotations

import hashlib
import socket
import struct
from dataclasses import dataclass

MAX_PACKET = 0xFFFFFF

# Capability flags (https://dev.mysql.com/doc/dev/mysql-server/latest/group__group__cs__capabilities__flags.html).
CLIENT_LONG_PASSWORD = 1
CLIENT_LONG_FLAG = 4
CLIENT_PROTOCOL_41 = 512
CLIENT_TRANSACTIONS = 8192
CLIENT_SECURE_CONNECTION = 32768
CLIENT_MULTI_RESULTS = 1 << 17
CLIENT_PLUGIN_AUTH = 1 << 19
CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA = 1 << 21
CLIENT_DEPRECATE_EOF = 1 << 24

CLIENT_FLAGS = (
    CLIENT_LONG_PASSWORD | CLIENT_LONG_FLAG | CLIENT_PROTOCOL_41 | CLIENT_TRANSACTIONS
    | CLIENT_SECURE_CONNECTION | CLIENT_MULTI_RESULTS | CLIENT_PLUGIN_AUTH
    | CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA
)  # fmt: skip
UTF8MB4_GENERAL_CI = 45

COM_QUIT = 0x01
COM_QUERY = 0x03

NATIVE = "mysql_native_password"
CACHING_SHA2 = "caching_sha2_password"

# Client error numbers (errmsg.h), as a replica reports them.
CR_CONN_HOST_ERROR = 2003
CR_UNKNOWN_HOST = 2005
CR_SERVER_LOST = 2013
CR_AUTH_PLUGIN_CANNOT_LOAD = 2059
CR_AUTH_PLUGIN_ERR = 2061


class SourceError(Exception):
    """A MySQL error from (or about) the source: ``code``, ``sqlstate``, ``message``."""

    def __init__(self, code: int, message: str, sqlstate: str = "HY000") -> None:
        super().__init__(f"({code}) {message}")
        self.code = code
        self.sqlstate = sqlstate
        self.message = message


@dataclass(frozen=True, slots=True)
class Handshake:
    """The server's greeting (Protocol::HandshakeV10)."""

    server_version: str
    connection_id: int
    nonce: bytes
    capabilities: int
    plugin: str


@dataclass(frozen=True, slots=True)
class ResultSet:
    """A text result set: column names and rows of strings (None for NULL)."""

    columns: list[str]
    rows: list[tuple[str | None, ...]]


def native_scramble(password: str, nonce: bytes) -> bytes:
    """mysql_native_password's answer: SHA1(pw) XOR SHA1(nonce + SHA1(SHA1(pw)))."""
    if not password:
        return b""
    stage1 = hashlib.sha1(password.encode()).digest()
    stage2 = hashlib.sha1(stage1).digest()
    mask = hashlib.sha1(nonce[:20] + stage2).digest()
    return bytes(a ^ b for a, b in zip(stage1, mask, strict=True))


def caching_sha2_scramble(password: str, nonce: bytes) -> bytes:
    """caching_sha2_password's fast-path answer:
    SHA256(pw) XOR SHA256(SHA256(SHA256(pw)) + nonce)."""
    if not password:
        return b""
    stage1 = hashlib.sha256(password.encode()).digest()
    stage2 = hashlib.sha256(stage1).digest()
    mask = hashlib.sha256(stage2 + nonce[:20]).digest()
    return bytes(a ^ b for a, b in zip(stage1, mask, strict=True))


_SCRAMBLES = {NATIVE: native_scramble, CACHING_SHA2: caching_sha2_scramble}


class SourceClient:
    """One connection to a source (see the module text). Not thread-safe: one owner."""

    def __init__(self, sock: socket.socket, address: str) -> None:
        self._sock = sock
        self._address = address
        self._seq = 0
        self._closed = False
        self.handshake: Handshake | None = None

    def __repr__(self) -> str:
        return f"<SourceClient {self._address}>"

    @classmethod
    def connect(
        cls, host: str, port: int, user: str, password: str, *, timeout: float = 60.0
    ) -> SourceClient:
        """Connect and log in. Raises ``SourceError``."""
        address = f"{host}:{port}"
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except socket.gaierror as exc:
            raise SourceError(
                CR_UNKNOWN_HOST, f"Unknown MySQL server host '{host}' ({exc.errno})"
            ) from exc
        last: OSError | None = None
        for family, kind, proto, _, sockaddr in infos:
            sock = socket.socket(family, kind, proto)
            sock.settimeout(timeout)
            try:
                sock.connect(sockaddr)
            except OSError as exc:
                sock.close()
                last = exc
                continue
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            client = cls(sock, address)
            try:
                client._log_in(user, password)
            except BaseException:
                client.close()
                raise
            return client
        errno = last.errno if last is not None and last.errno is not None else 0
        raise SourceError(
            CR_CONN_HOST_ERROR, f"Can't connect to MySQL server on '{address}' ({errno})"
        ) from last

    def abort(self) -> None:
        """(Any thread) Shut the connection down: a read in progress ends with 2013."""
        try:
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def close(self) -> None:
        """Say goodbye (COM_QUIT) if possible and close. Idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            self._sock.sendall(_frame(bytes([COM_QUIT]), 0))
        except OSError:
            pass
        self._sock.close()

    # -- commands ------------------------------------------------------------------------------

    def query(self, sql: str) -> ResultSet:
        """Run ``sql`` (COM_QUERY); its result set (empty for a statement without one)."""
        self.command(COM_QUERY, sql.encode())
        first = self.read_packet()
        if first[0] == 0x00:  # OK: no result set
            return ResultSet([], [])
        if first[0] == 0xFF:
            raise _error(first)
        count, _ = _lenenc_int(first, 0)
        columns = [_column_name(self.read_packet()) for _ in range(count)]
        self._expect_eof()
        rows: list[tuple[str | None, ...]] = []
        while True:
            packet = self.read_packet()
            if packet[0] == 0xFE and len(packet) < 9:
                return ResultSet(columns, rows)
            if packet[0] == 0xFF:
                raise _error(packet)
            rows.append(_text_row(packet, count))

    def execute(self, sql: str) -> None:
        """Run a statement whose result set, if any, is not needed."""
        self.query(sql)

    def expect_ok(self) -> None:
        """Read the OK packet that answers a command. Raises ``SourceError``."""
        packet = self.read_packet()
        if packet[0] != 0x00:
            raise self.error_of(packet)

    @staticmethod
    def error_of(packet: bytes) -> SourceError:
        """The error an unexpected packet stands for: the source's own for an ERR packet."""
        if packet[:1] == b"\xff":
            return _error(packet)
        return SourceError(CR_SERVER_LOST, "Malformed packet")

    def command(self, code: int, body: bytes = b"") -> None:
        """Send a command packet (a new sequence starts)."""
        self._seq = 0
        self.write_packet(bytes([code]) + body)

    # -- packets -------------------------------------------------------------------------------

    def read_packet(self) -> bytes:
        """The next payload (joined when split over several packets)."""
        parts = []
        while True:
            header = self._recv(4)
            length = header[0] | header[1] << 8 | header[2] << 16
            self._seq = (header[3] + 1) & 0xFF
            parts.append(self._recv(length))
            if length < MAX_PACKET:
                return b"".join(parts)

    def write_packet(self, payload: bytes) -> None:
        data = bytearray()
        for start in range(0, len(payload) + 1, MAX_PACKET):
            chunk = payload[start : start + MAX_PACKET]
            data += _frame(chunk, self._seq)
            self._seq = (self._seq + 1) & 0xFF
            if len(chunk) < MAX_PACKET:
                break
        try:
            self._sock.sendall(data)
        except OSError as exc:
            raise _lost(exc) from exc

    def _recv(self, size: int) -> bytes:
        buffer = bytearray()
        while len(buffer) < size:
            try:
                chunk = self._sock.recv(size - len(buffer))
            except OSError as exc:
                raise _lost(exc) from exc
            if not chunk:
                raise SourceError(CR_SERVER_LOST, "Lost connection to MySQL server during query")
            buffer += chunk
        return bytes(buffer)

    # -- login ---------------------------------------------------------------------------------

    def _log_in(self, user: str, password: str) -> None:
        greeting = self.read_packet()
        if greeting[0] == 0xFF:
            raise _error(greeting)
        handshake = self.handshake = parse_handshake(greeting)
        plugin = handshake.plugin if handshake.plugin in _SCRAMBLES else NATIVE
        answer = _SCRAMBLES[plugin](password, handshake.nonce)
        flags = CLIENT_FLAGS & (handshake.capabilities | CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA)
        body = struct.pack("<IIB23x", flags, MAX_PACKET, UTF8MB4_GENERAL_CI)
        body += user.encode() + b"\0"
        if flags & CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA:
            body += _lenenc_bytes(answer)
        else:
            body += bytes([len(answer)]) + answer
        body += plugin.encode() + b"\0"
        self.write_packet(body)
        self._finish_auth(plugin, password, handshake.nonce)

    def _finish_auth(self, plugin: str, password: str, nonce: bytes) -> None:
        while True:
            packet = self.read_packet()
            kind = packet[0]
            if kind == 0x00:
                return
            if kind == 0xFF:
                raise _error(packet)
            if kind == 0xFE:  # AuthSwitchRequest: another plugin, a new nonce
                end = packet.index(b"\0", 1)
                plugin = packet[1:end].decode()
                nonce = packet[end + 1 :].rstrip(b"\0")
                scramble = _SCRAMBLES.get(plugin)
                if scramble is None:
                    raise SourceError(
                        CR_AUTH_PLUGIN_CANNOT_LOAD,
                        f"Authentication plugin '{plugin}' cannot be loaded",
                    )
                self.write_packet(scramble(password, nonce))
            elif kind == 0x01 and plugin == CACHING_SHA2:  # AuthMoreData
                if packet[1:2] == b"\x03":  # fast authentication succeeded: OK follows
                    continue
                raise SourceError(
                    CR_AUTH_PLUGIN_ERR,
                    f"Authentication plugin '{CACHING_SHA2}' reported error: Authentication "
                    "requires secure connection.",
                )
            else:
                raise SourceError(CR_SERVER_LOST, "Lost connection to MySQL server during query")

    def _expect_eof(self) -> None:
        packet = self.read_packet()
        if not (packet[0] == 0xFE and len(packet) < 9):
            raise SourceError(CR_SERVER_LOST, "Malformed packet")


def parse_handshake(payload: bytes) -> Handshake:
    """Parse Protocol::HandshakeV10. Raises ``SourceError`` for anything else."""
    if not payload or payload[0] != 10:
        raise SourceError(CR_SERVER_LOST, "Malformed packet")
    end = payload.index(b"\0", 1)
    version = payload[1:end].decode(errors="replace")
    pos = end + 1
    connection_id, nonce1 = struct.unpack_from("<I8s", payload, pos)
    pos += 13  # 4 + 8 + the filler byte
    (low,) = struct.unpack_from("<H", payload, pos)
    pos += 2
    capabilities = low
    plugin = NATIVE
    nonce = nonce1
    if len(payload) > pos:
        _charset, _status, high, auth_length = struct.unpack_from("<BHHB", payload, pos)
        capabilities |= high << 16
        pos += 6 + 10  # reserved
        if capabilities & CLIENT_SECURE_CONNECTION:
            rest = max(13, auth_length - 8)
            nonce += payload[pos : pos + rest].rstrip(b"\0")
            pos += rest
        if capabilities & CLIENT_PLUGIN_AUTH:
            end = payload.find(b"\0", pos)
            plugin = payload[pos : end if end >= 0 else None].decode()
    return Handshake(version, connection_id, nonce, capabilities, plugin)


def _frame(payload: bytes, seq: int) -> bytes:
    return struct.pack("<I", len(payload))[:3] + bytes([seq]) + payload


def _lost(exc: OSError) -> SourceError:
    return SourceError(
        CR_SERVER_LOST, f"Lost connection to MySQL server during query ({exc.errno or 0})"
    )


def _error(packet: bytes) -> SourceError:
    """An ERR packet as a ``SourceError``."""
    (code,) = struct.unpack_from("<H", packet, 1)
    if packet[3:4] == b"#":
        return SourceError(code, packet[9:].decode(errors="replace"), packet[4:9].decode())
    return SourceError(code, packet[3:].decode(errors="replace"))


def _lenenc_int(data: bytes, pos: int) -> tuple[int, int]:
    first = data[pos]
    if first < 0xFB:
        return first, pos + 1
    if first == 0xFC:
        return struct.unpack_from("<H", data, pos + 1)[0], pos + 3
    if first == 0xFD:
        return int.from_bytes(data[pos + 1 : pos + 4], "little"), pos + 4
    if first == 0xFE:
        return struct.unpack_from("<Q", data, pos + 1)[0], pos + 9
    raise SourceError(CR_SERVER_LOST, "Malformed packet")


def _lenenc_bytes(value: bytes) -> bytes:
    length = len(value)
    if length < 0xFB:
        return bytes([length]) + value
    if length < 1 << 16:
        return b"\xfc" + struct.pack("<H", length) + value
    if length < 1 << 24:
        return b"\xfd" + length.to_bytes(3, "little") + value
    return b"\xfe" + struct.pack("<Q", length) + value


def _lenenc_str(data: bytes, pos: int) -> tuple[bytes, int]:
    length, pos = _lenenc_int(data, pos)
    return data[pos : pos + length], pos + length


def _column_name(packet: bytes) -> str:
    """The name in a Protocol::ColumnDefinition41 (catalog, schema, table, org_table, name)."""
    pos = 0
    for _ in range(4):
        _, pos = _lenenc_str(packet, pos)
    name, _ = _lenenc_str(packet, pos)
    return name.decode(errors="replace")


def _text_row(packet: bytes, count: int) -> tuple[str | None, ...]:
    values: list[str | None] = []
    pos = 0
    for _ in range(count):
        if packet[pos] == 0xFB:
            values.append(None)
            pos += 1
            continue
        value, pos = _lenenc_str(packet, pos)
        values.append(value.decode(errors="replace"))
    return tuple(values)
