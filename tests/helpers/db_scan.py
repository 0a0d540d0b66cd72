"""Scan every table of the inferwatch database for strings: where does a value survive?

The table list comes from ``system.tables`` at run time (every table of the store's database except views), so a
table added by a later migration is scanned without editing a test. Rows are read as stored, without ``FINAL``:
an older version of a ``ReplacingMergeTree`` row still on disk is data too. Every column that can hold text is
scanned (any type with ``String`` in it: LowCardinality, Map keys and values, Array items, Nullable, Tuple);
aggregate states (t-digests of numbers) cannot and are left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

_NOT_DATA = ("View", "MaterializedView", "LiveView", "WindowView")


def data_tables(store: Any) -> list[str]:
    """Every table of the store's database that holds rows (views excluded), sorted."""
    rows = store.query("SELECT name, engine FROM system.tables WHERE database = {d:String}",
                       {"d": store.database}).result_rows
    return sorted(name for name, engine in rows if engine not in _NOT_DATA)


def text_columns(store: Any, table: str) -> list[str]:
    """The columns of ``table`` that can hold text."""
    rows = store.query("SELECT name, type FROM system.columns WHERE database = {d:String} AND table = {t:String} "
                       "ORDER BY position", {"d": store.database, "t": table}).result_rows
    return [name for name, kind in rows if "String" in kind and not kind.startswith("AggregateFunction")]


def texts(value: Any) -> Iterator[str]:
    """Every string inside a value read from ClickHouse (map keys and values, array items, tuples)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, bytes):
        yield value.decode("utf-8", "replace")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from texts(key)
            yield from texts(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from texts(item)


def places_holding(store: Any, values: Iterable[str], *, skip: Iterable[str] = ()) -> list[str]:
    """``"table.column holds 'value'"`` for every place of the database where one of ``values`` survives, as a
    substring of any text; ``skip`` names tables not to scan. Empty when none does."""
    wanted = [v for v in values if v]
    skipped = set(skip)
    found = set()
    for table in data_tables(store):
        if table in skipped:
            continue
        columns = text_columns(store, table)
        if not columns:
            continue
        result = store.query(f"SELECT {', '.join(f'`{c}`' for c in columns)} FROM {store.database}.{table}")
        for row in result.result_rows:
            for column, value in zip(result.column_names, row):
                for text in texts(value):
                    for planted in wanted:
                        if planted in text:
                            found.add(f"{table}.{column} holds {planted!r}")
    return sorted(found)
