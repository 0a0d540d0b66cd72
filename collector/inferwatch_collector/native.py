"""Rows → ClickHouse Native-format blocks, without a database connection.

Why: encoding rows is Python work that holds the GIL. Doing it where the rows are made (an ingest worker
process) leaves the database-owning process only bytes to concatenate and hand to ClickHouse, whose parsing
runs in C++. Native streams may hold several blocks, so blocks from many requests are joined with ``b"".join``
and inserted in one statement. clickhouse-connect's own column writers do the encoding, so the bytes are exactly
what ``client.insert`` would have sent.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

from clickhouse_connect.datatypes.base import ClickHouseType
from clickhouse_connect.datatypes.registry import get_from_name
from clickhouse_connect.driver.insert import InsertContext
from clickhouse_connect.driver.transform import NativeTransform

from .rows import COLUMN_TYPES, TABLE_COLUMNS


#: clickhouse-connect's lazily resolved optional libraries (``driver.options`` attribute -> module).
DATAFRAME_LIBRARIES = {"pd": "pandas", "np": "numpy", "arrow": "pyarrow", "pl": "polars"}


def skip_dataframe_libraries() -> None:
    """Tell clickhouse-connect that pandas, numpy, pyarrow and polars are absent, unless one is already loaded.

    It imports them on a process's first insert (to recognise a DataFrame or an array among the data) and for
    ``query_df``/``query_np``/``query_arrow``; inferwatch sends and reads plain Python rows only, and those
    libraries would otherwise stay resident (~60 MiB) in the collector and in every ingest worker after their first
    insert or encode. Called where a process starts using clickhouse-connect (store clients, ingest workers)."""
    from clickhouse_connect.driver import options

    for attribute, module in DATAFRAME_LIBRARIES.items():
        if attribute not in vars(options) and module not in sys.modules:
            setattr(options, attribute, None)
    if vars(options).get("pd", False) is None:
        options.pd_time_test = None


@dataclass(frozen=True)
class EncodedRows:
    """One Native block (or several, concatenated) for one table."""

    data: bytes
    rows: int

    @staticmethod
    def join(parts: Sequence["EncodedRows"]) -> "EncodedRows":
        """Several requests' blocks as one insertable stream."""
        return EncodedRows(b"".join(p.data for p in parts), sum(p.rows for p in parts))


@lru_cache(maxsize=None)
def _types(table: str) -> tuple[ClickHouseType, ...]:
    return tuple(get_from_name(COLUMN_TYPES[table][name]) for name in TABLE_COLUMNS[table])


def encode_rows(table: str, rows: Sequence[tuple]) -> EncodedRows:
    """Encode rows (NamedTuples from :mod:`rows`, in column order) as Native blocks for ``table``."""
    if not rows:
        return EncodedRows(b"", 0)
    columns = [list(column) for column in zip(*rows)]
    context = InsertContext(table, TABLE_COLUMNS[table], _types(table), data=columns, column_oriented=True)
    chunks = list(NativeTransform.build_insert(context))
    if context.insert_exception is not None:  # a value that does not fit its column type
        raise ValueError(f"cannot encode a row for {table}: {context.insert_exception}")
    # The first chunk starts with the "INSERT INTO ... FORMAT Native\n" line meant for HTTP; keep only data.
    chunks[0] = chunks[0][chunks[0].index(b"\n") + 1 :]
    return EncodedRows(b"".join(chunks), len(rows))
