"""The MySQL client/server protocol at the packet level, for both of its ends: the replica's
receiver (``client.py``) and the built-in binlog server (``spark_replica.tools.source``).

A ``PacketStream`` frames payloads over a socket as the protocol says: a 3-byte
little-endian length, a sequence number, the payload; a payload of 2^24-1 bytes or more goes
in several packets. The helpers encode and decode length-encoded integers and strings, OK,
ERR and EOF packets, and the password scrambles of ``mysql_native_password`` and
``caching_sha2_password``.

Failures of the connection itself are ``SourceError`` 2013, as a MySQL client reports them.
"""

from __future__ import annotations

import hashlib
import socket
import ssl
import struct

MAX_PACKET = 0xFFFFFF
_RECV_SIZE = 1 << 16

# Capability flags (https://dev.mysql.com/doc/dev/mysql-server/latest/group__group__cs__capabilities__flags.html).
CLIENT_LONG_PASSWORD = 1
CLIENT_LONG_FLAG = 4
CLIENT_CONNECT_WITH_DB = 8
CLIENT_PROTOCOL_41 = 512
CLIENT_SSL = 2048
CLIENT_TRANSACTIONS = 8192
CLIENT_SECURE_CONNECTION = 32768
CLIENT_MULTI_RESULTS = 1 << 17
CLIENT_PLUGIN_AUTH = 1 << 19
CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA = 1 << 21
CLIENT_DEPRECATE_EOF = 1 << 24

UTF8MB4_GENERAL_CI = 45
BINARY_COLLATION = 63

COM_QUIT = 0x01
COM_QUERY = 0x03
COM_PING = 0x0E
COM_BINLOG_DUMP = 0x12
COM_REGISTER_SLAVE = 0x15
COM_BINLOG_DUMP_GTID = 0x1E

NATIVE = "mysql_native_password"
CACHING_SHA2 = "caching_sha2_password"

SERVER_STATUS_AUTOCOMMIT = 2

# Client error numbers (errmsg.h), as a replica reports them.
CR_CONN_HOST_ERROR = 2003
CR_UNKNOWN_HOST = 2005
CR_SERVER_LOST = 2013
CR_SSL_CONNECTION_ERROR = 2026
CR_MALFORMED_PACKET = 2027
CR_AUTH_PLUGIN_CANNOT_LOAD = 2059
CR_AUTH_PLUGIN_ERR = 2061


class SourceError(Exception):
    """A MySQL error from (or about) the source: ``code``, ``sqlstate``, ``message``."""

    def __init__(self, code: int, message: str, sqlstate: str = "HY000") -> None:
        super().__init__(f"({code}) {message}")
        self.code = code
        self.sqlstate = sqlstate
        self.message = message


def lost(exc: OSError | None = None) -> SourceError:
    """The error of a connection that went away (2013)."""
    suffix = f" ({exc.errno or 0})" if exc is not None else ""
    return SourceError(CR_SERVER_LOST, f"Lost connection to MySQL server during query{suffix}")


class PacketStream:
    """Packets over one socket, with the sequence numbers of the exchange in progress.
    Reads are buffered (``buffered`` tells whether a read can be answered without waiting
    for the network). Not thread-safe, except ``abort``."""

    def __init__(self, sock: socket.socket | ssl.SSLSocket) -> None:
        self.sock = sock
        self.seq = 0
        self._buffer = bytearray()
        self._start = 0  # where the unread bytes of _buffer begin
        #: Receive more than asked for. A server turns it off until the login is done: bytes
        #: after an SSLRequest belong to the TLS handshake, not to this buffer.
        self.read_ahead = True

    @property
    def buffered(self) -> int:
        """Bytes received and not read yet."""
        return len(self._buffer) - self._start

    def read_packet(self) -> bytes:
        """The next payload (joined when split over several packets)."""
        buffer, start = self._buffer, self._start
        if len(buffer) - start >= 4:  # the common case: a whole small packet is buffered
            length = buffer[start] | buffer[start + 1] << 8 | buffer[start + 2] << 16
            end = start + 4 + length
            if end <= len(buffer) and length < MAX_PACKET:
                self.seq = (buffer[start + 3] + 1) & 0xFF
                self._start = end
                return bytes(buffer[start + 4 : end])
        parts = []
        while True:
            header = self._recv(4)
            length = header[0] | header[1] << 8 | header[2] << 16
            self.seq = (header[3] + 1) & 0xFF
            parts.append(self._recv(length))
            if length < MAX_PACKET:
                return b"".join(parts)

    def write_packet(self, payload: bytes | bytearray | memoryview) -> None:
        self.sock_send(self.frame(payload))

    def frame(self, payload: bytes | bytearray | memoryview) -> bytearray:
        """``payload`` as the packets that carry it, numbered on from the current sequence."""
        data = bytearray()
        view = memoryview(payload)
        for start in range(0, len(view) + 1, MAX_PACKET):
            chunk = view[start : start + MAX_PACKET]
            data += struct.pack("<I", len(chunk))[:3]
            data.append(self.seq)
            data += chunk
            self.seq = (self.seq + 1) & 0xFF
            if len(chunk) < MAX_PACKET:
                break
        return data

    def sock_send(self, data: bytes | bytearray) -> None:
        try:
            self.sock.sendall(data)
        except OSError as exc:
            raise lost(exc) from exc

    def start_command(self) -> None:
        """A new command: its first packet has sequence number 0."""
        self.seq = 0

    def abort(self) -> None:
        """(Any thread) Shut the connection down: a read in progress ends with 2013."""
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _recv(self, size: int) -> bytes:
        buffer, start = self._buffer, self._start
        while len(buffer) - start < size:
            if start:
                del buffer[:start]
                start = self._start = 0
            try:
                missing = size - len(buffer)
                chunk = self.sock.recv(max(_RECV_SIZE, missing) if self.read_ahead else missing)
            except OSError as exc:
                raise lost(exc) from exc
            if not chunk:
                raise lost()
            buffer += chunk
        self._start = start + size
        return bytes(buffer[start : start + size])


# -- scrambles ---------------------------------------------------------------------------------


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


SCRAMBLES = {NATIVE: native_scramble, CACHING_SHA2: caching_sha2_scramble}


def xor_password(password: str, nonce: bytes) -> bytes:
    """The NUL-terminated password XOR the nonce (repeated): what caching_sha2_password
    encrypts with the server's RSA key."""
    raw = password.encode() + b"\0"
    return bytes(byte ^ nonce[i % len(nonce)] for i, byte in enumerate(raw))


# -- length-encoded values -----------------------------------------------------------------------


def lenenc_int(data: bytes, pos: int) -> tuple[int, int]:
    """The length-encoded integer at ``pos`` and the position after it."""
    first = data[pos]
    if first < 0xFB:
        return first, pos + 1
    if first == 0xFC:
        return struct.unpack_from("<H", data, pos + 1)[0], pos + 3
    if first == 0xFD:
        return int.from_bytes(data[pos + 1 : pos + 4], "little"), pos + 4
    if first == 0xFE:
        return struct.unpack_from("<Q", data, pos + 1)[0], pos + 9
    raise SourceError(CR_MALFORMED_PACKET, "Malformed packet")


def pack_lenenc_int(value: int) -> bytes:
    if value < 0xFB:
        return bytes([value])
    if value < 1 << 16:
        return b"\xfc" + struct.pack("<H", value)
    if value < 1 << 24:
        return b"\xfd" + value.to_bytes(3, "little")
    return b"\xfe" + struct.pack("<Q", value)


def lenenc_bytes(value: bytes) -> bytes:
    return pack_lenenc_int(len(value)) + value


def lenenc_str(data: bytes, pos: int) -> tuple[bytes, int]:
    length, pos = lenenc_int(data, pos)
    return data[pos : pos + length], pos + length


# -- OK, ERR, EOF --------------------------------------------------------------------------------


def ok_packet(affected_rows: int = 0, status: int = SERVER_STATUS_AUTOCOMMIT) -> bytes:
    return b"\x00" + pack_lenenc_int(affected_rows) + b"\x00" + struct.pack("<HH", status, 0)


def eof_packet(status: int = SERVER_STATUS_AUTOCOMMIT) -> bytes:
    return b"\xfe" + struct.pack("<HH", 0, status)


def err_packet(code: int, message: str, sqlstate: str = "HY000") -> bytes:
    return b"\xff" + struct.pack("<H", code) + b"#" + sqlstate.encode()[:5] + message.encode()


def is_eof(packet: bytes) -> bool:
    return packet[:1] == b"\xfe" and len(packet) < 9


def parse_error(packet: bytes) -> SourceError:
    """An ERR packet as a ``SourceError``."""
    (code,) = struct.unpack_from("<H", packet, 1)
    if packet[3:4] == b"#":
        return SourceError(code, packet[9:].decode(errors="replace"), packet[4:9].decode())
    return SourceError(code, packet[3:].decode(errors="replace"))
