"""caching_sha2_password logins for replicated accounts, as far as mysql-mimic's
authentication loop allows.

The replica holds MySQL's stored hash (``$A$005$``: SHA-256 crypt, ``storage.accounts.
passwords``), which checks a clear password but not the scramble of MySQL's fast path (that
needs SHA256(SHA256(password)), which the server caches only after a full authentication).
And mysql-mimic waits for a client reply after every AuthMoreData packet, so the server
cannot send the fast path's "success" byte (0x03) followed by OK. So every login takes the
full-authentication path: the server answers the scramble with 0x04 (perform full
authentication) and the client sends its clear password, which it does only over TLS. A
client on a plain connection asks for the server's RSA public key instead (0x02); the replica
has none to give and refuses the login with 1045. Clients log in with
``--ssl-mode=REQUIRED`` (pymysql: ``ssl=...``).
https://dev.mysql.com/doc/dev/mysql-server/latest/page_caching_sha2_authentication_exchanges.html
"""

from __future__ import annotations

import contextvars

from mysql_mimic import utils
from mysql_mimic.auth import AuthInfo, AuthPlugin, AuthState, Forbidden, Success
from mysql_mimic.stream import MysqlStream

from spark_replica.applier_core.storage.accounts import CACHING_SHA2, sha2_matches

#: The stream of the connection being authenticated (set by the server's connection), to
#: tell whether it runs over TLS.
client_stream: contextvars.ContextVar[MysqlStream | None] = contextvars.ContextVar(
    "client_stream", default=None
)

_PERFORM_FULL_AUTHENTICATION = b"\x04"
_REQUEST_PUBLIC_KEY = b"\x02"


class CachingSha2Password(AuthPlugin):
    """The server side of caching_sha2_password, full authentication only (see module)."""

    name = CACHING_SHA2
    client_plugin_name = CACHING_SHA2

    async def auth(self, auth_info: AuthInfo | None = None) -> AuthState:
        if not auth_info:
            auth_info = yield utils.nonce(20) + b"\x00"
        if auth_info.data in (b"", b"\x00"):  # an empty scramble: no password given
            if not auth_info.user.auth_string:
                yield Success(auth_info.user.name)
            else:
                yield Forbidden()
            return
        auth_info = yield _PERFORM_FULL_AUTHENTICATION
        if auth_info.data == _REQUEST_PUBLIC_KEY or not _over_tls():
            yield Forbidden()  # no RSA key pair: the clear password travels over TLS only
            return
        password = auth_info.data.rstrip(b"\x00")
        if sha2_matches(auth_info.user.auth_string or "", password):
            yield Success(auth_info.user.name)
        else:
            yield Forbidden()


def _over_tls() -> bool:
    stream = client_stream.get()
    return stream is not None and stream.writer.get_extra_info("sslcontext") is not None
