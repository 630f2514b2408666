"""ALTER TABLE on a table's definition and rows: the new definition and how each existing
row converts to it (``AlteredTable``; values: ``ddl_convert``), with MySQL's errors.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from spark_replica.applier_core.errors import ErrorCode
from spark_replica.applier_core.storage.collations import with_collations
from spark_replica.applier_core.storage.constraints import (
    AddCheck,
    AddForeignKey,
    AlterCheck,
    DropCheck,
    DropForeignKey,
    ForeignKeySpec,
    check,
    find_named,
    foreign_key,
    mentions,
    rename_in_clause,
    with_foreign_key_indexes,
    without_served,
)
from spark_replica.applier_core.storage.ddl_convert import (
    Converter,
    Kind,
    ValueFault,
    fill_converter,
    key_prefix_after,
    needs_copy,
    sql_type,
    type_converter,
)
from spark_replica.applier_core.storage.ddl_operations import (
    AddColumn,
    AddIndex,
    AddPrimaryKey,
    AlterColumn,
    AlterIndex,
    AlterTable,
    ChangeColumn,
    ConvertCharset,
    DropColumn,
    DropIndex,
    DropPrimaryKey,
    RenameColumn,
    RenameIndex,
    TableCollation,
    unsupported,
)
from spark_replica.applier_core.storage.indexes import (
    build_index,
    check_names,
    find_index,
    mysql_order,
)
from spark_replica.applier_core.storage.interface import (
    CheckConstraint,
    Column,
    EngineError,
    ForeignKey,
    Index,
    IndexPart,
    Row,
    TableDef,
    TableRef,
)

# -- ALTER TABLE on definitions and rows ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AlteredTable:
    """A table after ALTER TABLE: its ``definition``, and how each existing row becomes a
    row of it.

    For new column ``i``: ``sources[i]`` is the index of the old column its value comes from
    (None: a new column); ``converters[i]``, when not None, maps that old value (None for a
    new column) to the new value: a type conversion, a NOT NULL check, or a new column's fill
    value. ``convert_row`` applies both to a row of plain values, as an engine reads them,
    and raises MySQL's errors; ``keeps_rows`` is True when rows stay as they are (a key
    change still needs the rows re-keyed and checked for duplicates: 1062).
    """

    table: TableRef
    definition: TableDef
    sources: tuple[int | None, ...]
    converters: tuple[Converter | None, ...]
    keeps_rows: bool
    statement: str = field(default="", compare=False)

    def convert_row(self, row: Row, number: int) -> Row:
        """``row`` of the old table as a row of the new one; ``number`` (1-based) is the
        row's place in the table's scan, which error texts name.

        Raises:
            EngineError: 1235 naming the statement when a value cannot be converted (MySQL's
                strict mode refuses it, so the source ran in another mode, or the
                conversion is not implemented).
        """
        values: list[object] = []
        for index, (source, convert) in enumerate(zip(self.sources, self.converters, strict=True)):
            value = None if source is None else row[source]
            if convert is not None:
                try:
                    value = convert(value)
                except ValueFault as fault:
                    raise self._error(fault, index, number) from None
                except (TypeError, ValueError, ArithmeticError) as error:  # an unexpected value
                    odd = ValueFault(0, f"converting {value!r} in column '{{column}}': {error}")
                    raise self._error(odd, index, number) from error
            values.append(value)
        return tuple(values)

    def _error(self, fault: ValueFault, index: int, number: int) -> EngineError:
        text = fault.message(self.definition.columns[index].name, number)
        if fault.code:
            text = f"an ALTER TABLE that MySQL's strict mode refuses with {fault.code}: {text}"
        return unsupported(text, self.statement)


def alter_columns(op: AlterTable, definition: TableDef) -> AlteredTable:
    """The table ``definition`` after ``op``, with MySQL's errors for what cannot run.

    MySQL builds the new column list from the old one: each old column is dropped (DROP),
    replaced (CHANGE/MODIFY), renamed (RENAME COLUMN) or kept, all matched by its old name;
    then, in statement order, ADD appends or places its column and a CHANGE/MODIFY with
    FIRST/AFTER moves its own, where AFTER names a column of the list built so far (new
    names). So ``RENAME COLUMN a TO b, RENAME COLUMN b TO a`` swaps and ``DROP a, ADD a``
    replaces. Two clauses naming the same old column are refused (1235) rather than guessed.
    Errors: 1054 (unknown column or AFTER target), 1090 (no column left), 1091 (DROP of an
    unknown column, or DROP PRIMARY KEY without one), 1060 (duplicate name), 1068 (a second
    primary key), 1072 (unknown key column). A dropped key column leaves the primary key (a
    key left with no column is dropped); key columns become NOT NULL. Secondary keys follow
    the columns the same way; DROP/RENAME/ALTER INDEX name keys of the table before the
    statement (1091, 1176), ADD INDEX columns of the table being built (1061: a taken name).
    """
    return _Alteration(op, definition).run()


@dataclass(slots=True)
class _Slot:
    """A column of the table being built, and where its values come from."""

    column: Column
    source: int | None = None
    change: ChangeColumn | None = None
    add: AddColumn | None = None


#: Actions that name a column of the table before the statement.
_NAMING = (DropColumn, ChangeColumn, RenameColumn, AlterColumn)


class _Alteration:
    """One ``alter_columns`` run: the steps follow the order of MySQL's checks."""

    def __init__(self, op: AlterTable, definition: TableDef) -> None:
        self.op = op
        self.old = definition
        self.slots: list[_Slot] = []
        self.claimed: set[int] = set()  # indexes in op.actions of actions that found a column

    def run(self) -> AlteredTable:
        self._check_ambiguity()
        self._take_old_columns()
        self._place_columns()
        self._check_unknown_columns()
        key, dropped_key = self._old_key()
        self._check_drops(dropped_key)
        self._check_names()
        key = self._add_key(key)
        return self._result(key, dropped_key)

    def _fail(self, code: ErrorCode, *args: object) -> EngineError:
        return EngineError.of(code, *args, table=self.op.table)

    def _check_ambiguity(self) -> None:
        for column in self.old.columns:
            folded = column.name.casefold()
            naming = [a for a in self.op.actions if isinstance(a, _NAMING) and _named(a, folded)]
            if len(naming) > 1:
                what = f"several ALTER TABLE clauses on column '{column.name}'"
                raise unsupported(what, self.op.statement)

    def _take_old_columns(self) -> None:
        for index, column in enumerate(self.old.columns):
            action = self._claim(column.name)
            if isinstance(action, DropColumn):
                continue
            if isinstance(action, ChangeColumn):
                self.slots.append(_Slot(action.column, index, change=action))
            elif isinstance(action, RenameColumn):
                self.slots.append(_Slot(replace(column, name=action.new_name), index))
            else:
                self.slots.append(_Slot(column, index))

    def _claim(self, name: str) -> DropColumn | ChangeColumn | RenameColumn | AlterColumn | None:
        folded = name.casefold()
        for index, action in enumerate(self.op.actions):
            if isinstance(action, _NAMING) and _named(action, folded):
                self.claimed.add(index)
                return action
        return None

    def _place_columns(self) -> None:
        for index, action in enumerate(self.op.actions):
            if isinstance(action, AddColumn):
                if action.if_not_exists and self._position(action.column.name) is not None:
                    continue
                slot = _Slot(action.column, add=action)
                self.slots.insert(self._target(action.first, action.after), slot)
            elif isinstance(action, ChangeColumn):
                if index not in self.claimed:
                    raise self._fail(ErrorCode.BAD_FIELD_ERROR, action.name, self.op.table.table)
                if action.first or action.after is not None:
                    moved = next(s for s in self.slots if s.change is action)
                    self.slots.remove(moved)
                    self.slots.insert(self._target(action.first, action.after), moved)

    def _position(self, name: str) -> int | None:
        folded = name.casefold()
        found = (i for i, slot in enumerate(self.slots) if slot.column.name.casefold() == folded)
        return next(found, None)

    def _target(self, first: bool, after: str | None) -> int:
        if first:
            return 0
        if after is None:
            return len(self.slots)
        found = self._position(after)
        if found is None:
            raise self._fail(ErrorCode.BAD_FIELD_ERROR, after, self.op.table.table)
        return found + 1

    def _check_unknown_columns(self) -> None:
        for index, action in enumerate(self.op.actions):
            if isinstance(action, RenameColumn | AlterColumn) and index not in self.claimed:
                raise self._fail(ErrorCode.BAD_FIELD_ERROR, action.name, self.op.table.table)
        if not self.slots:
            raise self._fail(ErrorCode.CANT_REMOVE_ALL_FIELDS)

    def _old_key(self) -> tuple[list[tuple[_Slot, int]], bool]:
        """The old primary key's parts that survive, as (slot, prefix); whether DROP PRIMARY
        KEY dropped it."""
        dropped = bool(self.old.primary_key) and any(
            isinstance(a, DropPrimaryKey) for a in self.op.actions
        )
        if dropped:
            return [], True
        by_source = {slot.source: slot for slot in self.slots if slot.source is not None}
        parts: list[tuple[_Slot, int]] = []
        for index, prefix in zip(self.old.primary_key, self.old.key_prefix, strict=True):
            slot = by_source.get(index)
            if slot is not None:
                changed = slot.change is not None
                parts.append(
                    (slot, key_prefix_after(prefix, slot.column.type) if changed else prefix)
                )
        return parts, False

    def _check_drops(self, dropped_key: bool) -> None:
        """DROP of an unknown column, or DROP PRIMARY KEY with no key or twice: 1091 for the
        first in the statement."""
        key_drops = 0
        for index, action in enumerate(self.op.actions):
            if (
                isinstance(action, DropColumn)
                and index not in self.claimed
                and not action.if_exists
            ):
                raise self._fail(ErrorCode.CANT_DROP_FIELD_OR_KEY, action.name)
            if isinstance(action, DropPrimaryKey):
                key_drops += 1
                if key_drops > int(dropped_key):
                    raise self._fail(ErrorCode.CANT_DROP_FIELD_OR_KEY, "PRIMARY")

    def _check_names(self) -> None:
        seen: set[str] = set()
        for slot in self.slots:
            folded = slot.column.name.casefold()
            if folded in seen:
                raise self._fail(ErrorCode.DUP_FIELDNAME, slot.column.name)
            seen.add(folded)

    def _add_key(self, key: list[tuple[_Slot, int]]) -> list[tuple[_Slot, int]]:
        for action in self.op.actions:
            if not isinstance(action, AddPrimaryKey):
                continue
            if key:
                raise self._fail(ErrorCode.MULTIPLE_PRI_KEY)
            prefixes = action.prefixes or (0,) * len(action.columns)
            for name, prefix in zip(action.columns, prefixes, strict=True):
                position = self._position(name)
                if position is None:
                    raise self._fail(ErrorCode.KEY_COLUMN_DOES_NOT_EXITS, name)
                if any(slot is self.slots[position] for slot, _ in key):
                    raise self._fail(ErrorCode.DUP_FIELDNAME, name)
                key.append((self.slots[position], prefix))
        for slot, _ in key:  # MySQL makes key columns NOT NULL
            slot.column = replace(slot.column, nullable=False)
        return key

    def _result(self, key: list[tuple[_Slot, int]], dropped_key: bool) -> AlteredTable:
        copy = self._copies(dropped_key)
        convert = next((a for a in self.op.actions if isinstance(a, ConvertCharset)), None)
        charset = convert.charset if convert is not None else None
        converters = tuple(self._converter(slot, copy, charset) for slot in self.slots)
        sources = tuple(slot.source for slot in self.slots)
        position = {id(slot): i for i, slot in enumerate(self.slots)}
        columns = tuple(slot.column for slot in self.slots)
        table_collation = next(
            (a.collation for a in reversed(self.op.actions) if isinstance(a, TableCollation)),
            self.old.collation,
        )
        definition = with_collations(
            TableDef(
                columns,
                tuple(position[id(slot)] for slot, _ in key),
                tuple(prefix for _, prefix in key),
                self._secondary_keys(columns),
                table_collation,
            ),
            "",
            convert=convert.collation if convert is not None else "",
        )
        definition = self._constraints(definition)
        keeps = sources == tuple(range(len(self.old.columns))) and not any(converters)
        return AlteredTable(
            self.op.table, definition, sources, converters, keeps, self.op.statement
        )

    def _secondary_keys(self, columns: tuple[Column, ...]) -> tuple[Index, ...]:
        """The old secondary keys that stay (DROP INDEX, RENAME INDEX and ALTER INDEX
        applied; a dropped column leaves its keys, and a key left without columns is dropped,
        as in MySQL), then the added ones, in MySQL's order."""
        used: set[int] = set()  # the DROP/RENAME/ALTER INDEX actions that found their key
        for number, action in enumerate(self.op.actions):
            if isinstance(action, DropIndex) and action.constraint:
                old = self.old
                if find_named(old.foreign_keys, action.name) or find_named(old.checks, action.name):
                    used.add(number)  # DROP CONSTRAINT of a foreign key or check
        kept: list[Index] = []
        for index in self.old.indexes:
            if self._index_action(index.name, DropIndex, used) is not None:
                continue
            renamed = self._index_action(index.name, RenameIndex, used)
            altered = self._index_action(index.name, AlterIndex, used)
            parts = self._moved_parts(index.parts)
            if not parts:
                continue
            kept.append(
                replace(
                    index,
                    name=renamed.new_name if isinstance(renamed, RenameIndex) else index.name,
                    parts=parts,
                    visible=altered.visible if isinstance(altered, AlterIndex) else index.visible,
                )
            )
        for number, action in enumerate(self.op.actions):
            if number in used:
                continue
            if isinstance(action, DropIndex) and not (action.if_exists or action.constraint):
                raise self._fail(ErrorCode.CANT_DROP_FIELD_OR_KEY, action.name)
            if isinstance(action, RenameIndex | AlterIndex):
                raise self._fail(ErrorCode.KEY_DOES_NOT_EXITS, action.name, self.op.table.table)
        for index in kept:
            if index.name.casefold() == "primary":
                raise self._fail(ErrorCode.WRONG_NAME_FOR_INDEX, index.name)
        check_names(kept)
        added = [
            Index("", a.spec.kind, tuple(IndexPart(_at(columns, p.column)) for p in a.spec.parts))
            for a in self.op.actions
            if isinstance(a, AddIndex)
        ]
        kept = without_served(kept, added)  # a new key replaces a foreign key's generated one
        for action in self.op.actions:
            if isinstance(action, AddIndex):
                name = action.spec.name
                if action.if_not_exists and name and find_index(kept, name) is not None:
                    continue
                try:
                    kept.append(build_index(action.spec, columns, kept))
                except EngineError as error:
                    error.add_context(table=self.op.table)
                    raise
        return mysql_order(kept, columns)

    def _constraints(self, definition: TableDef) -> TableDef:
        """``definition`` with the old foreign keys and checks that stay (their columns
        moved or renamed), then the added ones, and the keys the added foreign keys need."""
        position = {slot.source: i for i, slot in enumerate(self.slots) if slot.source is not None}
        old_names = [c.name for c in self.old.columns]
        dropped = [name for i, name in enumerate(old_names) if i not in position]
        renamed = {
            old_names[source]: definition.columns[new].name
            for source, new in position.items()
            if old_names[source] != definition.columns[new].name
        }
        redefined = {
            old_names[slot.source].casefold()
            for slot in self.slots
            if slot.change is not None and slot.source is not None
        }
        drops = {
            a.name.casefold()
            for a in self.op.actions
            if isinstance(a, DropForeignKey | DropCheck)
            or (isinstance(a, DropIndex) and a.constraint)
        }
        keys: list[ForeignKey] = []
        for key in self.old.foreign_keys:
            moved = [position.get(column) for column in key.columns]
            if key.name.casefold() not in drops and all(m is not None for m in moved):
                keys.append(replace(key, columns=tuple(m for m in moved if m is not None)))
        checks = [self._kept_check(c, dropped, renamed, redefined, drops) for c in self.old.checks]
        kept_checks = [c for c in checks if c is not None]
        table = self.op.table.table
        added: list[tuple[ForeignKey, ForeignKeySpec]] = []
        for action in self.op.actions:
            if isinstance(action, AddForeignKey):
                built = foreign_key(action.spec, table, definition.columns, keys, action.mariadb)
                if built is not None:
                    keys.append(built)
                    added.append((built, action.spec))
            elif isinstance(action, AddCheck):
                kept_checks.append(check(action.spec, table, kept_checks, action.mariadb))
        indexes = with_foreign_key_indexes(definition, added)
        return replace(
            definition,
            indexes=mysql_order(indexes, definition.columns),
            foreign_keys=tuple(keys),
            checks=tuple(kept_checks),
        )

    def _kept_check(
        self,
        found: CheckConstraint,
        dropped: list[str],
        renamed: dict[str, str],
        redefined: set[str],
        drops: set[str],
    ) -> CheckConstraint | None:
        """An old check after the statement (None: it goes)."""
        if found.name.casefold() in drops or mentions(found.clause, dropped):
            return None
        if found.column and found.column.casefold() in redefined:
            return None  # MariaDB: the column's new definition replaces its checks
        enforced = found.enforced
        for action in self.op.actions:
            if isinstance(action, AlterCheck) and action.name.casefold() == found.name.casefold():
                enforced = action.enforced
        folded = {old.casefold(): new for old, new in renamed.items()}
        column = folded.get(found.column.casefold(), found.column)
        clause = rename_in_clause(found.clause, renamed)
        return replace(found, clause=clause, enforced=enforced, column=column)

    def _index_action(
        self, name: str, kind: type[DropIndex | RenameIndex | AlterIndex], used: set[int]
    ) -> DropIndex | RenameIndex | AlterIndex | None:
        """The first action of ``kind`` on the key ``name`` not matched yet."""
        folded = name.casefold()
        for number, action in enumerate(self.op.actions):
            if number not in used and isinstance(action, kind):
                if action.name.casefold() == folded:
                    used.add(number)
                    return action
        return None

    def _moved_parts(self, parts: tuple[IndexPart, ...]) -> tuple[IndexPart, ...]:
        """Key parts on the columns of the table being built: a dropped column's part goes,
        a changed column's prefix follows its new type (``key_prefix_after``)."""
        position = {slot.source: i for i, slot in enumerate(self.slots) if slot.source is not None}
        renamed = {
            self.old.columns[slot.source].name: slot.column.name
            for slot in self.slots
            if slot.source is not None and self.old.columns[slot.source].name != slot.column.name
        }
        moved: list[IndexPart] = []
        for part in parts:
            if part.expression:
                moved.append(replace(part, expression=rename_in_clause(part.expression, renamed)))
                continue
            new = position.get(part.column)
            if new is None:
                continue
            slot = self.slots[new]
            prefix = part.prefix
            if slot.change is not None:
                prefix = key_prefix_after(prefix, slot.column.type)
            moved.append(replace(part, column=new, prefix=prefix))
        return tuple(moved)

    def _copies(self, dropped_key: bool) -> bool:
        """Whether MySQL runs this ALTER by copying rows (ALGORITHM=COPY, a type change not
        done in place, CONVERT TO CHARACTER SET, DROP PRIMARY KEY without ADD): it decides
        MySQL's error for a NULL left in a NOT NULL column."""
        actions = self.op.actions
        if self.op.copy or any(isinstance(a, ConvertCharset) for a in actions):
            return True
        if dropped_key and not any(isinstance(a, AddPrimaryKey) for a in actions):
            return True
        return any(
            slot.change is not None
            and slot.source is not None
            and needs_copy(sql_type(self.old.columns[slot.source].type), sql_type(slot.column.type))
            for slot in self.slots
        )

    def _converter(self, slot: _Slot, copy: bool, charset: str | None) -> Converter | None:
        if slot.source is None:
            assert slot.add is not None
            column, default = slot.column, slot.add.default
            if default is None and column.nullable:
                return None
            return fill_converter(column.name, column.type, column.nullable, default)
        old = self.old.columns[slot.source]
        steps = [
            _type_step(old, slot.column, slot.change),
            _charset_step(slot.column, charset),
            _null_step(old, slot.column, copy),
        ]
        return _chain([step for step in steps if step is not None])


def _at(columns: tuple[Column, ...], name: str) -> int:
    """The position of column ``name`` (-1: none)."""
    folded = name.casefold()
    return next((i for i, c in enumerate(columns) if c.name.casefold() == folded), -1)


def _named(action: DropColumn | ChangeColumn | RenameColumn | AlterColumn, folded: str) -> bool:
    return action.name.casefold() == folded


def _type_step(old: Column, new: Column, change: ChangeColumn | None) -> Converter | None:
    """The type conversion of a CHANGE/MODIFY (values MySQL computes anew are refused)."""
    if change is None:
        return None
    if change.generated is not None and change.generated != "AUTO_INCREMENT":
        return _refuse(f"computing existing rows of column '{new.name}' {change.generated}")
    steps = [type_converter(old.type, new.type)]
    if change.charset is not None and change.charset not in _TEXT_CHARSETS:
        steps.append(_refuse_values(f"converting text of column '{new.name}' to {change.charset}"))
    if change.generated == "AUTO_INCREMENT":
        steps.append(_no_renumbering)
    return _chain([step for step in steps if step is not None])


def _charset_step(column: Column, charset: str | None) -> Converter | None:
    """CONVERT TO CHARACTER SET: text the decoder gave as bytes (a character set it does not
    read) would change; text it gave as ``str`` keeps its characters."""
    if charset is None or sql_type(column.type).kind not in _TEXT_KINDS:
        return None
    if charset not in _TEXT_CHARSETS:
        return _refuse_values(f"converting text of column '{column.name}' to {charset}")

    def check(value: object) -> object:
        if isinstance(value, bytes):
            raise ValueFault(0, f"converting text of unknown character set in '{column.name}'")
        return value

    return check


def _null_step(old: Column, new: Column, copy: bool) -> Converter | None:
    """NULL into a column made NOT NULL: MySQL 1265 when it copies rows, else 1138."""
    if new.nullable or not old.nullable:
        return None
    fault = (
        ValueFault(1265, "Data truncated for column '{column}' at row {row}")
        if copy
        else ValueFault(1138, "Invalid use of NULL value")
    )

    def check(value: object) -> object:
        if value is None:
            raise fault
        return value

    return check


def _no_renumbering(value: object) -> object:
    """A column made AUTO_INCREMENT: MySQL gives its NULL and 0 values new numbers."""
    if value is None or value == 0:
        raise ValueFault(0, "numbering the NULL or 0 values of a column made AUTO_INCREMENT")
    return value


def _refuse(what: str) -> Converter:
    def refuse(value: object) -> object:
        raise ValueFault(0, what)

    return refuse


def _refuse_values(what: str) -> Converter:
    def refuse(value: object) -> object:
        if value is None:
            return None
        raise ValueFault(0, what)

    return refuse


def _chain(steps: list[Converter]) -> Converter | None:
    if len(steps) <= 1:
        return steps[0] if steps else None

    def run(value: object) -> object:
        for step in steps:
            value = step(value)
        return value

    return run


#: Character sets whose text the binlog decoder gives as ``str`` (``binlog.rows.charsets``).
_TEXT_CHARSETS = frozenset({"utf8mb4", "utf8mb3", "utf8", "latin1", "ascii"})
_TEXT_KINDS = frozenset({Kind.CHAR, Kind.VARCHAR, Kind.TEXT, Kind.ENUM, Kind.SET})
