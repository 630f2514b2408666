"""Accounts and mysql_native_password authentication.

``root`` takes its password from SPARK_REPLICA_ROOT_PASSWORD; without it the first start
generates one, prints it once, and stores only its hash. Other accounts come from the
configuration file, each ``admin`` or ``read_only``. Unknown users and wrong passwords get
MySQL's 1045; there is no anonymous login.
"""

from __future__ import annotations

import contextvars
import secrets
from collections.abc import Sequence
from typing import Protocol

from mysql_mimic.auth import (
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
from spark_replica.server.config import ServerConfig

ROOT = "root"

#: The client's address, set by the server for each connection (for 1045 messages).
client_host: contextvars.ContextVar[str] = contextvars.ContextVar(
    "client_host", default="localhost"
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


class ReplicaIdentityProvider(IdentityProvider):
    """Looks accounts up in the metadata store on every login."""

    def __init__(self, store: UserStore) -> None:
        self.store = store
        self._plugin = _NativePassword()

    def get_plugins(self) -> Sequence[AuthPlugin]:
        return [self._plugin]

    async def get_user(self, username: str) -> User | None:
        found = self.store.get_user(username)
        if found is None:
            # An account that cannot match, so the client gets 1045 like any wrong password.
            return User(name=username, auth_string="00" * 20, auth_plugin=self._plugin.name)
        auth_string, _ = found
        return User(
            name=username,
            auth_string=auth_string.removeprefix("*").lower(),
            auth_plugin=self._plugin.name,
        )

    def role_of(self, username: str) -> str | None:
        found = self.store.get_user(username)
        return found[1] if found else None
