"""Tests of the binary log codec; real binlogs live in the shared fixtures directory."""

from __future__ import annotations

from pathlib import Path

#: ``shared/fixtures/binlogs`` beside the repository.
FIXTURES = Path(__file__).parents[3].parent / "shared" / "fixtures" / "binlogs"

#: Table_map and Rows event types (decoded by the rows codec).
ROW_TYPES = frozenset({19, 23, 24, 25, 30, 31, 32, 39})
