"""A value ALTER TABLE cannot convert: ``ValueFault``, with the error MySQL's strict mode
gives for it (or code 0 for a conversion not implemented here)."""

from __future__ import annotations


class ValueFault(Exception):
    """A value that cannot be converted.

    ``code`` is the error MySQL's strict mode gives for it (1138, 1264, 1265, 1366, 1406),
    0 when the conversion is not implemented here; ``text`` the message, with ``{column}``
    and ``{row}`` to fill (``message``).
    """

    def __init__(self, code: int, text: str) -> None:
        super().__init__(text)
        self.code = code
        self.text = text

    def message(self, column: str, row: int) -> str:
        return self.text.replace("{column}", column).replace("{row}", str(row))


def out_of_range() -> ValueFault:
    return ValueFault(1264, "Out of range value for column '{column}' at row {row}")


def truncated() -> ValueFault:
    return ValueFault(1265, "Data truncated for column '{column}' at row {row}")


def too_long() -> ValueFault:
    return ValueFault(1406, "Data too long for column '{column}' at row {row}")


def wrong_value(kind: str, value: str) -> ValueFault:
    text = f"Incorrect {kind} value: '{value[:128]}' for column '{{column}}' at row {{row}}"
    return ValueFault(1366, text)


def not_implemented(what: str) -> ValueFault:
    return ValueFault(0, what)
