"""The client side of the MySQL protocol, as a replica's receiver speaks it to its source.

``SourceClient.connect`` opens a TCP connection, reads the server's handshake (protocol 10),
switches to TLS when the channel asks for it (SOURCE_SSL=1) and logs in with
``mysql_native_password`` or ``caching_sha2_password``, following an authentication switch
when the server asks for another plugin. caching_sha2_password's full authentication sends
the password in clear over TLS, or encrypted with the source's RSA public key: the one in
SOURCE_PUBLIC_KEY_PATH, or, with GET_SOURCE_PUBLIC_KEY=1, the one the source sends.

``query`` runs a statement through COM_QUERY and returns a text result set; ``command`` sends
any other command packet. Every failure is a ``SourceError`` with MySQL's number, SQLSTATE and
message: the server's own ERR packets as they come, and the client errors a MySQL replica
shows in Last_IO_Error for connection problems (2003, 2005, 2013, 2026, 2061).
"""

from __future__ import annotations

import socket
import ssl
import struct
from dataclasses import dataclass
from pathlib import Path

from spark_replica.applier_core.receiver.protocol import (
    CACHING_SHA2,
    CLIENT_LONG_FLAG,
    CLIENT_LONG_PASSWORD,
    CLIENT_MULTI_RESULTS,
    CLIENT_PLUGIN_AUTH,
    CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA,
    CLIENT_PROTOCOL_41,
    CLIENT_SECURE_CONNECTION,
    CLIENT_SSL,
    CLIENT_TRANSACTIONS,
    COM_QUERY,
    COM_QUIT,
    CR_AUTH_PLUGIN_CANNOT_LOAD,
    CR_AUTH_PLUGIN_ERR,
    CR_CONN_HOST_ERROR,
    CR_MALFORMED_PACKET,
    CR_SERVER_LOST,
    CR_SSL_CONNECTION_ERROR,
    CR_UNKNOWN_HOST,
    MAX_PACKET,
    NATIVE,
    SCRAMBLES,
    UTF8MB4_GENERAL_CI,
    PacketStream,
    SourceError,
    caching_sha2_scramble,
    is_eof,
    lenenc_bytes,
    lenenc_int,
    lenenc_str,
    native_scramble,
    parse_error,
    xor_password,
)

__all__ = [
    "CR_AUTH_PLUGIN_CANNOT_LOAD", "CR_AUTH_PLUGIN_ERR", "CR_CONN_HOST_ERROR", "CR_SERVER_LOST",
    "CR_SSL_CONNECTION_ERROR", "CR_UNKNOWN_HOST", "Handshake", "ResultSet", "Security",
    "SourceClient", "SourceError", "caching_sha2_scramble", "native_scramble", "parse_handshake",
]  # fmt: skip

CLIENT_FLAGS = (
    CLIENT_LONG_PASSWORD | CLIENT_LONG_FLAG | CLIENT_PROTOCOL_41 | CLIENT_TRANSACTIONS
    | CLIENT_SECURE_CONNECTION | CLIENT_MULTI_RESULTS | CLIENT_PLUGIN_AUTH
    | CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA
)  # fmt: skip

# caching_sha2_password's AuthMoreData codes, and the client's request for the public key.
_FAST_AUTH_OK = 3
_FULL_AUTH = 4
_REQUEST_PUBLIC_KEY = b"\x02"


@dataclass(frozen=True, slots=True)
class Security:
    """How to secure the connection: SOURCE_SSL*, SOURCE_PUBLIC_KEY_PATH,
    GET_SOURCE_PUBLIC_KEY."""

    use_ssl: bool = False
    ca: str = ""
    cert: str = ""
    key: str = ""
    verify_server_cert: bool = False
    public_key_path: str = ""
    get_public_key: bool = False

    def context(self) -> ssl.SSLContext:
        """The TLS context. Without a CA the server's certificate is not checked (MySQL's
        SOURCE_SSL=1 alone encrypts but does not authenticate)."""
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        if self.ca:
            context.load_verify_locations(self.ca)
            context.check_hostname = self.verify_server_cert
        else:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
        if self.cert:
            context.load_cert_chain(self.cert, self.key or None)
        return context


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


class SourceClient:
    """One connection to a source (see the module text). Not thread-safe: one owner, except
    ``abort``."""

    def __init__(self, sock: socket.socket, address: str, host: str = "") -> None:
        self._stream = PacketStream(sock)
        self._address = address
        self._host = host
        self._closed = False
        self.handshake: Handshake | None = None

    def __repr__(self) -> str:
        return f"<SourceClient {self._address}>"

    @property
    def stream(self) -> PacketStream:
        """The packet stream underneath (its socket, for a caller that reads bytes itself)."""
        return self._stream

    @property
    def buffered(self) -> int:
        """Bytes received from the source and not read yet."""
        return self._stream.buffered

    @property
    def encrypted(self) -> bool:
        return isinstance(self._stream.sock, ssl.SSLSocket)

    @classmethod
    def connect(
        cls,
        host: str,
        port: int,
        user: str,
        password: str,
        *,
        timeout: float = 60.0,
        security: Security | None = None,
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
            client = cls(sock, address, host)
            try:
                client._log_in(user, password, security or Security())
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
        self._stream.abort()

    def close(self) -> None:
        """Say goodbye (COM_QUIT) if possible and close. Idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            self.command(COM_QUIT)
        except SourceError:
            pass
        self._stream.sock.close()

    # -- commands ------------------------------------------------------------------------------

    def query(self, sql: str) -> ResultSet:
        """Run ``sql`` (COM_QUERY); its result set (empty for a statement without one)."""
        self.command(COM_QUERY, sql.encode())
        first = self.read_packet()
        if first[0] == 0x00:  # OK: no result set
            return ResultSet([], [])
        if first[0] == 0xFF:
            raise parse_error(first)
        count, _ = lenenc_int(first, 0)
        columns = [_column_name(self.read_packet()) for _ in range(count)]
        if not is_eof(self.read_packet()):
            raise SourceError(CR_MALFORMED_PACKET, "Malformed packet")
        rows: list[tuple[str | None, ...]] = []
        while True:
            packet = self.read_packet()
            if is_eof(packet):
                return ResultSet(columns, rows)
            if packet[0] == 0xFF:
                raise parse_error(packet)
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
            return parse_error(packet)
        return SourceError(CR_MALFORMED_PACKET, "Malformed packet")

    def command(self, code: int, body: bytes = b"") -> None:
        """Send a command packet (a new sequence starts)."""
        self._stream.start_command()
        self.write_packet(bytes([code]) + body)

    # -- packets -------------------------------------------------------------------------------

    def read_packet(self) -> bytes:
        """The next payload (joined when split over several packets)."""
        return self._stream.read_packet()

    def write_packet(self, payload: bytes) -> None:
        self._stream.write_packet(payload)

    # -- login ---------------------------------------------------------------------------------

    def _log_in(self, user: str, password: str, security: Security) -> None:
        greeting = self.read_packet()
        if greeting[0] == 0xFF:
            raise parse_error(greeting)
        handshake = self.handshake = parse_handshake(greeting)
        plugin = handshake.plugin if handshake.plugin in SCRAMBLES else NATIVE
        answer = SCRAMBLES[plugin](password, handshake.nonce)
        flags = CLIENT_FLAGS & (handshake.capabilities | CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA)
        if security.use_ssl:
            if not handshake.capabilities & CLIENT_SSL:
                raise SourceError(CR_SSL_CONNECTION_ERROR, "SSL connection error: SSL is "
                                  "required but the server doesn't support it")  # fmt: skip
            flags |= CLIENT_SSL
            head = struct.pack("<IIB23x", flags, MAX_PACKET, UTF8MB4_GENERAL_CI)
            self.write_packet(head)  # SSLRequest, then the handshake goes on encrypted
            self._start_tls(security)
        body = struct.pack("<IIB23x", flags, MAX_PACKET, UTF8MB4_GENERAL_CI)
        body += user.encode() + b"\0"
        if flags & CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA:
            body += lenenc_bytes(answer)
        else:
            body += bytes([len(answer)]) + answer
        body += plugin.encode() + b"\0"
        self.write_packet(body)
        self._finish_auth(plugin, password, handshake.nonce, security)

    def _start_tls(self, security: Security) -> None:
        stream = self._stream
        try:
            context = security.context()
            stream.sock = context.wrap_socket(
                stream.sock, server_hostname=self._host if context.check_hostname else None
            )
        except (ssl.SSLError, OSError) as exc:
            reason = getattr(exc, "reason", None) or str(exc)
            raise SourceError(CR_SSL_CONNECTION_ERROR, f"SSL connection error: {reason}") from exc

    def _finish_auth(self, plugin: str, password: str, nonce: bytes, security: Security) -> None:
        while True:
            packet = self.read_packet()
            kind = packet[0]
            if kind == 0x00:
                return
            if kind == 0xFF:
                raise parse_error(packet)
            if kind == 0xFE:  # AuthSwitchRequest: another plugin, a new nonce
                end = packet.index(b"\0", 1)
                plugin = packet[1:end].decode()
                nonce = packet[end + 1 :].rstrip(b"\0")
                scramble = SCRAMBLES.get(plugin)
                if scramble is None:
                    raise SourceError(
                        CR_AUTH_PLUGIN_CANNOT_LOAD,
                        f"Authentication plugin '{plugin}' cannot be loaded",
                    )
                self.write_packet(scramble(password, nonce))
            elif kind == 0x01 and plugin == CACHING_SHA2:  # AuthMoreData
                if packet[1:2] == bytes([_FAST_AUTH_OK]):  # the OK packet follows
                    continue
                if packet[1:2] != bytes([_FULL_AUTH]):
                    raise SourceError(CR_MALFORMED_PACKET, "Malformed packet")
                self._full_auth(password, nonce, security)
            else:
                raise SourceError(CR_SERVER_LOST, "Lost connection to MySQL server during query")

    def _full_auth(self, password: str, nonce: bytes, security: Security) -> None:
        """caching_sha2_password's full authentication: the password in clear over TLS, else
        encrypted with the source's RSA public key."""
        if self.encrypted:
            self.write_packet(password.encode() + b"\0")
            return
        if security.public_key_path:
            try:
                key = Path(security.public_key_path).read_bytes()
            except OSError as exc:
                raise _needs_secure_connection() from exc
        elif security.get_public_key:
            self.write_packet(_REQUEST_PUBLIC_KEY)
            reply = self.read_packet()
            if reply[:1] != b"\x01":
                raise self.error_of(reply)
            key = reply[1:]
        else:
            raise _needs_secure_connection()
        self.write_packet(rsa_encrypt(key, xor_password(password, nonce[:20])))


def rsa_encrypt(public_key_pem: bytes, data: bytes) -> bytes:
    """``data`` encrypted with an RSA public key in PEM, OAEP padding (SHA-1), as MySQL's
    clients do for caching_sha2_password."""
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import padding, rsa

    try:
        key = serialization.load_pem_public_key(public_key_pem)
    except ValueError as exc:
        raise _plugin_error("the public key is not a valid RSA key.") from exc
    if not isinstance(key, rsa.RSAPublicKey):
        raise _plugin_error("the public key is not an RSA key.")
    oaep = padding.OAEP(mgf=padding.MGF1(hashes.SHA1()), algorithm=hashes.SHA1(), label=None)
    return key.encrypt(data, oaep)


def _needs_secure_connection() -> SourceError:
    return _plugin_error("Authentication requires secure connection.")


def _plugin_error(reason: str) -> SourceError:
    return SourceError(
        CR_AUTH_PLUGIN_ERR, f"Authentication plugin '{CACHING_SHA2}' reported error: {reason}"
    )


def parse_handshake(payload: bytes) -> Handshake:
    """Parse Protocol::HandshakeV10. Raises ``SourceError`` for anything else."""
    if not payload or payload[0] != 10:
        raise SourceError(CR_MALFORMED_PACKET, "Malformed packet")
    try:
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
    except (ValueError, struct.error, UnicodeDecodeError) as exc:
        raise SourceError(CR_MALFORMED_PACKET, "Malformed packet") from exc
    return Handshake(version, connection_id, nonce, capabilities, plugin)


def _column_name(packet: bytes) -> str:
    """The name in a Protocol::ColumnDefinition41 (catalog, schema, table, org_table, name)."""
    pos = 0
    for _ in range(4):
        _, pos = lenenc_str(packet, pos)
    name, _ = lenenc_str(packet, pos)
    return name.decode(errors="replace")


def _text_row(packet: bytes, count: int) -> tuple[str | None, ...]:
    values: list[str | None] = []
    pos = 0
    for _ in range(count):
        if packet[pos] == 0xFB:
            values.append(None)
            pos += 1
            continue
        value, pos = lenenc_str(packet, pos)
        values.append(value.decode(errors="replace"))
    return tuple(values)
