"""Accounts and authentication.

Local accounts: ``root`` takes its password from SPARK_REPLICA_ROOT_PASSWORD; without it the
first start generates one, prints it once, and stores only its hash. Other accounts come from
the configuration file, each ``admin`` or ``read_only``. They log in with
mysql_native_password.

Replicated accounts (``storage.accounts``, applied from the source's account statements) log
in with the password they have on the source: mysql_native_password against the replicated
hash, caching_sha2_password over TLS (``sha2_auth``). A local account wins over a replicated
one of the same user name, whatever its host. A locked replicated account gets 3118; unknown
users, wrong passwords and accounts whose plugin the replica cannot check (ed25519, PAM, ...)
get MySQL's 1045; there is no anonymous login unless the source created an anonymous account.
"""

from __future__ import annotations

import contextvars
import secrets
from collections.abc import Sequence
from typing import Protocol

from mysql_mimic.auth import (
    FILLER,
    AuthInfo,
    AuthPlugin,
    AuthState,
    Forbidden,
    IdentityProvider,
    NativePasswordAuthPlugin,
    Success,
    User,
)

from spark_replica.applier_core.errors import ErrorCode, format_message
from spark_replica.applier_core.storage import StorageEngine
from spark_replica.applier_core.storage.accounts import CACHING_SHA2, NATIVE, match_account
from spark_replica.server.config import ServerConfig
from spark_replica.server.sha2_auth import CachingSha2Password

ROOT = "root"

#: The client's address, set by the server for each connection (for 1045 messages).
client_host: contextvars.ContextVar[str] = contextvars.ContextVar(
    "client_host", default="localhost"
)
#: The error number of the last refused login, when it is not 1045 (a locked account: 3118);
#: the connection reads it when it sends the error.
denial_code: contextvars.ContextVar[ErrorCode | None] = contextvars.ContextVar(
    "denial_code", default=None
)


class UserStore(Protocol):
    def get_user(self, name: str) -> tuple[str, str] | None: ...

    def put_user(self, name: str, auth_string: str, role: str) -> None: ...


def native_hash(password: str) -> str:
    """MySQL's stored form: ``*`` and the upper-case hex of SHA1(SHA1(password))."""
    if not password:
        return ""
    return "*" + NativePasswordAuthPlugin.create_auth_string(password).upper()


def provision_users(store: UserStore, config: ServerConfig) -> str | None:
    """Store the accounts of ``config``; the generated root password on first start, else None."""
    generated = None
    if config.root_password is not None:
        store.put_user(ROOT, native_hash(config.root_password), "admin")
    elif store.get_user(ROOT) is None:
        generated = secrets.token_urlsafe(12)
        store.put_user(ROOT, native_hash(generated), "admin")
    for user in config.users:
        store.put_user(user.name, native_hash(user.password), user.role)
    return generated


class _NativePassword(NativePasswordAuthPlugin):
    """mysql_native_password with MySQL's 1045 message."""

    async def auth(self, auth_info: AuthInfo | None = None) -> AuthState:
        state = super().auth(auth_info)
        decision = await state.__anext__()
        while True:
            if isinstance(decision, Forbidden):
                info = auth_info
                name = info.username if info else ""
                yield Forbidden(_denied(name, bool(info and info.data)))
                return
            if isinstance(decision, Success):
                yield decision
                return
            auth_info = yield decision
            decision = await state.asend(auth_info)


def _denied(user: str, with_password: bool) -> str:
    return format_message(
        ErrorCode.ACCESS_DENIED_ERROR, user, client_host.get(), "YES" if with_password else "NO"
    )


class _Locked(AuthPlugin):
    """A locked replicated account: every login is refused with 3118."""

    name = "spark_replica_locked_account"

    async def auth(self, auth_info: AuthInfo | None = None) -> AuthState:
        if not auth_info:
            auth_info = yield FILLER
        denial_code.set(ErrorCode.ACCOUNT_HAS_BEEN_LOCKED)
        yield Forbidden(
            format_message(ErrorCode.ACCOUNT_HAS_BEEN_LOCKED, auth_info.username, client_host.get())
        )


class ReplicaIdentityProvider(IdentityProvider):
    """Looks accounts up on every login: the metadata store's local accounts, then the
    replicated accounts of ``engine``."""

    def __init__(self, store: UserStore, engine: StorageEngine | None = None) -> None:
        self.store = store
        self.engine = engine
        self._plugin = _NativePassword()
        self._plugins: list[AuthPlugin] = [self._plugin, CachingSha2Password(), _Locked()]

    def get_plugins(self) -> Sequence[AuthPlugin]:
        return self._plugins

    async def get_user(self, username: str) -> User | None:
        found = self.store.get_user(username)
        if found is None:
            return self._replicated(username) or self._no_match(username)
        auth_string, _ = found
        return User(
            name=username,
            auth_string=auth_string.removeprefix("*").lower(),
            auth_plugin=self._plugin.name,
        )

    def _replicated(self, username: str) -> User | None:
        if self.engine is None:
            return None
        account = match_account(self.engine.accounts(), username, client_host.get())
        if account is None:
            return None
        if account.locked:
            return User(name=username, auth_plugin=_Locked.name)
        if account.plugin == NATIVE:
            hashed = account.auth_string.removeprefix("*").lower()
            return User(name=username, auth_string=hashed, auth_plugin=self._plugin.name)
        if account.plugin == CACHING_SHA2:
            return User(name=username, auth_string=account.auth_string, auth_plugin=CACHING_SHA2)
        return None  # a plugin the replica cannot check: refused like a wrong password

    def _no_match(self, username: str) -> User:
        # An account that cannot match, so the client gets 1045 like any wrong password.
        return User(name=username, auth_string="00" * 20, auth_plugin=self._plugin.name)

    def role_of(self, username: str) -> str | None:
        found = self.store.get_user(username)
        return found[1] if found else None
