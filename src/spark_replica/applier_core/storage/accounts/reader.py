"""A cursor over an account statement's tokens: keywords, account names (``'u'@'h'``, ``u@h``,
```u```, a role without host), privilege lists and privilege levels, as MySQL's grammar
writes them. https://dev.mysql.com/doc/refman/8.4/en/grant.html
"""

from __future__ import annotations

from spark_replica.applier_core.errors import ErrorCode
from spark_replica.applier_core.storage.accounts.model import ANY, AccountName, GrantLevel
from spark_replica.applier_core.storage.accounts.tokens import Kind, Token, redacted, tokenize
from spark_replica.applier_core.storage.interface import EngineError

#: Words that end a privilege's name or a list.
_STOP = frozenset({"ON", "TO", "FROM"})


class Reader:
    def __init__(self, statement: str) -> None:
        self.statement = statement
        self.tokens = [t for t in tokenize(statement) if t.text != ";" or t.kind is not Kind.PUNCT]
        self.position = 0

    # -- primitives --------------------------------------------------------------------------
    def syntax(self) -> EngineError:
        at = self.tokens[self.position].start if not self.done() else len(self.statement)
        near = redacted(self.statement[at:])[:80]
        return EngineError.of(ErrorCode.PARSE_ERROR, near, 1)

    def done(self) -> bool:
        return self.position >= len(self.tokens)

    def _token(self, offset: int = 0) -> Token | None:
        index = self.position + offset
        return self.tokens[index] if index < len(self.tokens) else None

    def peek_word(self, offset: int = 0) -> str:
        token = self._token(offset)
        return token.upper if token is not None else ""

    def peek_punct(self, offset: int, char: str) -> bool:
        token = self._token(offset)
        return token is not None and token.kind is Kind.PUNCT and token.text == char

    def word(self) -> str:
        word = self.peek_word()
        if not word:
            raise self.syntax()
        self.position += 1
        return word

    def accept(self, *words: str) -> bool:
        if all(self.peek_word(i) == w for i, w in enumerate(words)):
            self.position += len(words)
            return True
        return False

    def expect(self, word: str) -> None:
        if not self.accept(word):
            raise self.syntax()

    def expect_one(self, *words: str) -> str:
        word = self.peek_word()
        if word not in words:
            raise self.syntax()
        self.position += 1
        return word

    def accept_punct(self, char: str) -> bool:
        if self.peek_punct(0, char):
            self.position += 1
            return True
        return False

    def expect_punct(self, char: str) -> None:
        if not self.accept_punct(char):
            raise self.syntax()

    def end(self) -> None:
        if not self.done():
            raise self.syntax()

    def skip_rest(self) -> None:
        self.position = len(self.tokens)

    def skip_clause(self) -> None:
        """Pass one token of a clause that is accepted and not kept."""
        self.position += 1

    def string(self) -> str:
        token = self._token()
        if token is None or token.kind is not Kind.STRING:
            raise self.syntax()
        self.position += 1
        return token.text

    def secret(self) -> str:
        """A hash: a string, or a hex literal (MySQL writes binary hashes as 0x...)."""
        token = self._token()
        if token is not None and token.kind is Kind.HEX:
            self.position += 1
            return bytes.fromhex(token.text).decode("latin-1")
        return self.string()

    def plugin(self) -> str:
        token = self._token()
        if token is None or token.kind is Kind.PUNCT or token.kind is Kind.HEX:
            raise self.syntax()
        self.position += 1
        return token.text.lower()

    def _name_part(self) -> str:
        token = self._token()
        if token is None or token.kind is Kind.PUNCT or token.kind is Kind.HEX:
            raise self.syntax()
        self.position += 1
        return token.text

    # -- accounts ----------------------------------------------------------------------------
    def account(self, *, role_default: bool = False) -> AccountName:
        """``user[@host]``; the host is ``%`` when left out (for users and roles alike)."""
        if self.peek_word() == "CURRENT_USER":
            raise EngineError.of(ErrorCode.NOT_SUPPORTED_YET,
                                 f"CURRENT_USER in an account statement: "
                                 f"{redacted(self.statement)[:200]}")  # fmt: skip
        user = self._name_part()
        host = "%"
        if self.accept_punct("@"):
            host = self._host()
        del role_default  # MySQL's default host for roles and users is the same: '%'
        return AccountName.of(user, host)

    def _host(self) -> str:
        """A host: quoted, or unquoted words and dots (``localhost``, ``10.0.0.1``)."""
        token = self._token()
        if token is not None and token.kind in (Kind.STRING, Kind.NAME):
            self.position += 1
            return token.text
        parts: list[str] = []
        while (token := self._token()) is not None:
            if token.kind is Kind.WORD or (token.kind is Kind.PUNCT and token.text in ".%-_"):
                if parts and token.kind is Kind.WORD and self.tokens[self.position - 1].kind is \
                        Kind.WORD:  # fmt: skip
                    break
                parts.append(token.text)
                self.position += 1
            else:
                break
        if not parts:
            raise self.syntax()
        return "".join(parts)

    def account_list(self, *, role_default: bool = False) -> tuple[AccountName, ...]:
        names = [self.account(role_default=role_default)]
        while self.accept_punct(","):
            names.append(self.account(role_default=role_default))
        return tuple(names)

    # -- privileges --------------------------------------------------------------------------
    def privilege_list(self) -> tuple[list[str], dict[str, tuple[str, ...]]]:
        """The privileges before ON/TO/FROM, upper case (multi-word ones joined by one
        space), and the columns of each privilege that names some."""
        privileges: list[str] = []
        columns: dict[str, tuple[str, ...]] = {}
        while True:
            words = []
            while (token := self._token()) is not None and token.upper not in _STOP:
                if token.kind is Kind.PUNCT:
                    break
                words.append(token.upper if token.kind is Kind.WORD else token.text)
                self.position += 1
            if not words:
                raise self.syntax()
            privilege = " ".join(words)
            privilege = "ALL PRIVILEGES" if privilege == "ALL" else privilege
            privileges.append(privilege)
            if self.accept_punct("("):
                names = [self._name_part()]
                while self.accept_punct(","):
                    names.append(self._name_part())
                self.expect_punct(")")
                columns[privilege] = (*columns.get(privilege, ()), *names)
            if not self.accept_punct(","):
                return privileges, columns

    def role_names(self, start: int) -> list[AccountName]:
        """The roles of ``GRANT r1, r2 TO``, read again from token ``start``, where the
        privilege list began (role names keep their case and may carry a host)."""
        self.position = start
        return list(self.account_list(role_default=True))

    def level(self, database: str | None) -> GrantLevel:
        """``[TABLE|FUNCTION|PROCEDURE] *.* | db.* | db.t | * | t``."""
        kind = ""
        if self.peek_word() in ("TABLE", "FUNCTION", "PROCEDURE") and not self.peek_punct(1, "."):
            kind = self.word()
            kind = "" if kind == "TABLE" else kind
        first = self._level_part()
        if self.accept_punct("."):
            second = self._level_part()
            if first == ANY and second != ANY:
                raise self.syntax()
            return GrantLevel(first, second, "", kind)
        if not database:
            raise EngineError.of(ErrorCode.NO_DB_ERROR)
        return GrantLevel(database, first, "", kind)

    def _level_part(self) -> str:
        if self.accept_punct("*"):
            return ANY
        return self._name_part()
