from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.unit.provider.helpers import RelayBuilder


@pytest.fixture
def builder(tmp_path: Path) -> Iterator[RelayBuilder]:
    """An open relay log of channel c1 with its writer (files rotate only on ``rotate()``)."""
    built = RelayBuilder(tmp_path / "data")
    yield built
    built.close()
