"""Password hashes as MySQL stores them, and their checks.

* ``mysql_native_password``: ``*`` and the upper-case hex of SHA1(SHA1(password)). The
  stored hash is enough to check a login scramble (the server never needs the password).
* ``caching_sha2_password``: ``$A$005$``, a 20-byte salt and the 43-character SHA-256 crypt
  digest of the password with 5000 rounds (Ulrich Drepper's SHA-crypt, as MySQL's
  ``sha256_password`` computes it). Checking it needs the clear password, which a client
  sends only on the full-authentication path (over TLS, or RSA-encrypted).
https://dev.mysql.com/doc/refman/8.4/en/caching-sha2-pluggable-authentication.html
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

#: The prefix of a caching_sha2_password hash: format A, 5 x 1000 rounds.
SHA2_PREFIX = "$A$005$"
SHA2_ROUNDS = 5000
SHA2_SALT_LENGTH = 20
_B64 = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
#: SHA-crypt's byte order of the final digest, three bytes per four characters.
_ORDER = ((0, 10, 20), (21, 1, 11), (12, 22, 2), (3, 13, 23), (24, 4, 14), (15, 25, 5),
          (6, 16, 26), (27, 7, 17), (18, 28, 8), (9, 19, 29))  # fmt: skip


def native_hash(password: str) -> str:
    """``*`` and the upper-case hex of SHA1(SHA1(password)); empty for no password.

    >>> native_hash("password")
    '*2470C0C06DEE42FD1618BB99005ADCA2EC9D1E19'
    """
    if not password:
        return ""
    stage1 = hashlib.sha1(password.encode("utf-8")).digest()
    return "*" + hashlib.sha1(stage1).hexdigest().upper()


def sha2_hash(password: str, salt: bytes | None = None) -> str:
    """The caching_sha2_password hash of ``password`` (a fresh salt unless given); empty for
    no password."""
    if not password:
        return ""
    if salt is None:  # printable and never '$', as MySQL's salts
        salt = bytes(secrets.choice(b"./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrs"
                                    b"tuvwxyz") for _ in range(SHA2_SALT_LENGTH))  # fmt: skip
    digest = sha256_crypt(password.encode("utf-8"), salt, SHA2_ROUNDS)
    return SHA2_PREFIX + salt.decode("latin-1") + digest


def sha2_matches(auth_string: str, password: bytes) -> bool:
    """Whether ``password`` is the one ``auth_string`` (``$A$005$...``) was made from."""
    if not auth_string:
        return not password
    if not auth_string.startswith("$A$") or len(auth_string) < 7 + SHA2_SALT_LENGTH:
        return False
    rounds = int(auth_string[3:6], 16) * 1000
    salt = auth_string[7 : 7 + SHA2_SALT_LENGTH].encode("latin-1")
    expected = auth_string[7 + SHA2_SALT_LENGTH :]
    return hmac.compare_digest(sha256_crypt(password, salt, rounds), expected)


def sha256_crypt(password: bytes, salt: bytes, rounds: int) -> str:
    """SHA-crypt with SHA-256 (https://www.akkadia.org/drepper/SHA-crypt.txt): the 43-character
    digest, without prefix or salt."""
    alternate = hashlib.sha256(password + salt + password).digest()
    first = hashlib.sha256(password + salt)
    length = len(password)
    remaining = length
    while remaining > 32:
        first.update(alternate)
        remaining -= 32
    first.update(alternate[:remaining])
    bits = length
    while bits > 0:
        first.update(alternate if bits & 1 else password)
        bits >>= 1
    digest = first.digest()
    p_bytes = _stretch(hashlib.sha256(password * length).digest(), length)
    s_bytes = _stretch(hashlib.sha256(salt * (16 + digest[0])).digest(), len(salt))
    for i in range(rounds):
        step = hashlib.sha256(p_bytes if i & 1 else digest)
        if i % 3:
            step.update(s_bytes)
        if i % 7:
            step.update(p_bytes)
        step.update(digest if i & 1 else p_bytes)
        digest = step.digest()
    out = [_b64(digest[a], digest[b], digest[c], 4) for a, b, c in _ORDER]
    out.append(_b64(0, digest[31], digest[30], 3))
    return "".join(out)


def _stretch(block: bytes, length: int) -> bytes:
    return (block * (length // len(block) + 1))[:length]


def _b64(high: int, middle: int, low: int, count: int) -> str:
    word = (high << 16) | (middle << 8) | low
    chars = []
    for _ in range(count):
        chars.append(_B64[word & 0x3F])
        word >>= 6
    return "".join(chars)
