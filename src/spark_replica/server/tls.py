"""TLS for the server's clients: a fix for mysql-mimic's ``MysqlStream.start_tls``.

A MySQL client that wants TLS sends an SSLRequest packet and starts the TLS handshake right
away, without waiting for an answer. The server reads the SSLRequest through an
``asyncio.StreamReader``, which reads whatever the socket holds, so the first bytes of the
client's ClientHello are often already in the reader's buffer when the upgrade starts.
mysql-mimic 3.0.5 upgrades with ``loop.start_tls``, which (like ``StreamWriter.start_tls``)
hands the TLS layer only the bytes that arrive from then on: the buffered ClientHello bytes
are never seen by it, both sides wait for each other and the handshake hangs (pymysql hangs
every time).

``start_tls`` below does what ``asyncio.BaseEventLoop.start_tls`` does, and in addition
gives the reader's buffered bytes to the TLS protocol before the socket is read again, then
rewires the stream reader and writer to the TLS transport as mysql-mimic does.
"""

from __future__ import annotations

import asyncio
import ssl
from asyncio import sslproto
from typing import Any, cast

from mysql_mimic.stream import ConnectionClosed, MysqlStream


async def start_tls(stream: MysqlStream, context: ssl.SSLContext) -> None:
    """Upgrade ``stream`` (the server side, right after the SSLRequest) to TLS."""
    reader = cast(Any, stream.reader)
    writer: asyncio.StreamWriter = stream.writer
    await stream.drain()
    error = reader.exception()
    if error is not None:
        raise error
    transport = cast(asyncio.Transport, writer.transport)
    if reader.at_eof() or transport.is_closing():
        raise ConnectionClosed()
    if not getattr(transport, "_start_tls_compatible", False):
        raise TypeError(f"transport {transport!r} does not support TLS")
    app_protocol = transport.get_protocol()
    loop = asyncio.get_running_loop()
    waiter: asyncio.Future[None] = loop.create_future()
    tls = sslproto.SSLProtocol(
        loop,
        app_protocol,
        context,
        waiter,
        server_side=True,
        call_connection_made=False,
    )
    # From here on the socket's bytes go to the TLS protocol, and none before it is ready.
    transport.pause_reading()
    transport.set_protocol(tls)
    # What the reader already holds came after the SSLRequest: the start of the handshake.
    early = bytes(reader._buffer)
    reader._buffer.clear()
    # The reader may have paused the socket for a full buffer; the buffer is empty now and
    # reading resumes below.
    reader._paused = False

    def feed_early_bytes() -> None:
        # As the transport gives received bytes to a buffered protocol.
        view = memoryview(early)
        try:
            while view:
                buffer = tls.get_buffer(len(view))
                size = min(len(buffer), len(view))
                buffer[:size] = view[:size]
                tls.buffer_updated(size)
                view = view[size:]
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException as e:
            if not waiter.done():
                waiter.set_exception(e)

    # The order of BaseEventLoop.start_tls, with the early bytes before reading resumes.
    handles = [
        loop.call_soon(tls.connection_made, transport),
        loop.call_soon(feed_early_bytes),
        loop.call_soon(transport.resume_reading),
    ]
    try:
        await waiter
    except BaseException:
        transport.close()
        for handle in handles:
            handle.cancel()
        raise
    if tls._app_transport is None:  # the connection was lost during the handshake
        raise ConnectionClosed()
    tls_transport = tls._app_transport
    # Rewire the streams as mysql-mimic does, and tell the stream protocol (as
    # StreamWriter.start_tls does) so that it leaves the closing handshake to TLS.
    cast(Any, writer)._transport = tls_transport
    reader._transport = tls_transport
    replace_writer = getattr(app_protocol, "_replace_writer", None)
    if replace_writer is not None:
        replace_writer(writer)


def install() -> None:
    """Replace ``MysqlStream.start_tls`` with the fixed one (idempotent)."""
    cast(Any, MysqlStream).start_tls = start_tls
