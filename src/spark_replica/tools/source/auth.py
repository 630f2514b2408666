"""Logging a replica in to the built-in source: accounts, the handshake's checks, and
caching_sha2_password's two paths.

An account has a user, a password and a plugin (``caching_sha2_password`` by default, as in
MySQL 8.4, or ``mysql_native_password``). ``caching_sha2_password`` answers a correct scramble
with "fast auth success" once the account's password is in the server's cache (after one full
authentication since the server started, as MySQL does); otherwise it asks for full
authentication: the password in clear over TLS, or encrypted with the server's RSA key, which
it sends to a client that asks (GET_SOURCE_PUBLIC_KEY=1).
"""

from __future__ import annotations

import hmac
import threading
from dataclasses import dataclass

from spark_replica.applier_core.receiver.protocol import CACHING_SHA2, NATIVE, SCRAMBLES


@dataclass(frozen=True, slots=True)
class Account:
    user: str
    password: str
    plugin: str = CACHING_SHA2

    def __post_init__(self) -> None:
        if self.plugin not in SCRAMBLES:
            raise ValueError(f"unknown authentication plugin {self.plugin!r}")


class RsaKeys:
    """The server's RSA key pair for caching_sha2_password (generated at start)."""

    def __init__(self, bits: int = 2048) -> None:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import rsa

        self._private = rsa.generate_private_key(public_exponent=65537, key_size=bits)
        self.public_pem = self._private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )

    def decrypt(self, data: bytes) -> bytes:
        """``data`` decrypted (OAEP, SHA-1). Raises ``ValueError`` for anything undecryptable."""
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding

        oaep = padding.OAEP(mgf=padding.MGF1(hashes.SHA1()), algorithm=hashes.SHA1(), label=None)
        return self._private.decrypt(data, oaep)


class Authenticator:
    """The accounts and caching_sha2_password's cache of verified passwords. Thread-safe."""

    def __init__(self, accounts: list[Account]) -> None:
        self._accounts = {account.user: account for account in accounts}
        self._lock = threading.Lock()
        self._cached: set[str] = set()  # users whose password passed full authentication
        self._keys: RsaKeys | None = None

    def account(self, user: str) -> Account | None:
        return self._accounts.get(user)

    def keys(self) -> RsaKeys:
        """The RSA key pair, made on first use (it takes a moment)."""
        with self._lock:
            if self._keys is None:
                self._keys = RsaKeys()
            return self._keys

    def scramble_matches(self, account: Account, plugin: str, nonce: bytes, answer: bytes) -> bool:
        """Whether ``answer`` is ``plugin``'s scramble of the account's password."""
        expected = SCRAMBLES[plugin](account.password, nonce)
        return hmac.compare_digest(expected, answer)

    def fast_path(self, account: Account, nonce: bytes, answer: bytes) -> bool:
        """caching_sha2_password: the scramble is right and the password is cached."""
        with self._lock:
            cached = account.user in self._cached
        return cached and self.scramble_matches(account, CACHING_SHA2, nonce, answer)

    def full(self, account: Account, password: str) -> bool:
        """Full authentication with the password itself; caches it on success."""
        if not hmac.compare_digest(account.password.encode(), password.encode()):
            return False
        with self._lock:
            self._cached.add(account.user)
        return True


__all__ = ["CACHING_SHA2", "NATIVE", "Account", "Authenticator", "RsaKeys"]
