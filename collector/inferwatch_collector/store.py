"""The one place that builds ClickHouse clients: embedded chDB by default, a ClickHouse server by URL.

Both go through clickhouse-connect, so every query in the project runs unchanged against either. chDB allows
one data directory per process and one process per directory; the error for the second case is turned into a
message that says what to do. Clients are kept one per thread (a chDB connection is not meant to be shared
between threads), all on the same engine, and all closed by :meth:`Store.close`.
"""

from __future__ import annotations

import importlib
import sys
import threading
from pathlib import Path
from typing import Any, Sequence
from urllib.parse import urlsplit

import clickhouse_connect
from clickhouse_connect.driver.client import Client
from clickhouse_connect.driver.query import QueryResult

from .native import skip_dataframe_libraries
from .private_dir import private_directory
from .settings import Settings


class StoreError(RuntimeError):
    """The database could not be opened or reached; the message says why and what to do."""


def _import_engine() -> None:
    """Import chDB (through clickhouse-connect's backend) without pyarrow.

    chDB imports pyarrow when it is installed (Streamlit, for the dashboard, brings it) for its Arrow result
    formats only; inferwatch never asks for them (clickhouse-connect reads Native), and pyarrow's libraries would
    keep ~50 MiB resident in every collector. A pyarrow that something else already imported is left alone."""
    if "clickhouse_connect.driver._chdbclient" in sys.modules:
        return
    blocked = "pyarrow" not in sys.modules
    if blocked:
        sys.modules["pyarrow"] = None  # type: ignore[assignment]  # `import pyarrow` raises ImportError
    try:
        import clickhouse_connect.driver._chdbclient  # noqa: F401  (imports chdb)

        importlib.import_module("chdb.state")  # what chdb.connect imports, pyarrow with it (a module of chdb-core)
    finally:
        if blocked and "pyarrow" in sys.modules and sys.modules["pyarrow"] is None:
            del sys.modules["pyarrow"]


#: The embedded engine's caches that ClickHouse sizes for a dedicated server (1-5 GiB each by default), capped at
#: ``chdb_cache_mib`` each; they fill only as queries read parts, so this bounds the collector under query load.
#: The uncompressed cache is already off by default.
CAPPED_CACHES = ("mark_cache_size", "primary_index_cache_size", "index_mark_cache_size",
                 "text_index_header_cache_size", "text_index_postings_cache_size", "text_index_tokens_cache_size",
                 "vector_similarity_index_cache_size")


def engine_options(settings: Settings) -> dict[str, int]:
    """Server settings of the embedded engine, applied when a process first opens it (chDB's connection
    string)."""
    return {name: settings.chdb_cache_mib * 1024 * 1024 for name in CAPPED_CACHES}


def _open_client(settings: Settings, database: str | None) -> Client:
    skip_dataframe_libraries()
    if settings.embedded:
        path = private_directory(Path(settings.data_dir).expanduser().resolve())
        _import_engine()
        try:
            return clickhouse_connect.get_client(dsn=f"chdb://{path}", database=database or "",
                                                 chdb_options=engine_options(settings))
        except Exception as exc:  # chDB raises ProgrammingError with the engine's text inside
            text = str(exc)
            if "Cannot lock file" in text or "already running" in text:
                raise StoreError(
                    f"the data directory {path} is in use by another inferwatch process (a running collector "
                    "or `inferwatch-server up`?). Stop it, or use the running collector's API instead."
                ) from exc
            if "already initialized with path" in text:
                raise StoreError(
                    f"this process already has another embedded database open; one process can open one chDB "
                    f"data directory at a time (wanted {path})"
                ) from exc
            raise StoreError(f"cannot open the embedded database at {path}: {text}") from exc
    parts = urlsplit(settings.clickhouse_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise StoreError(
            f"INFERWATCH_CLICKHOUSE_URL must look like http://host:8123 or https://host:8443, "
            f"got {settings.clickhouse_url!r}"
        )
    try:
        return clickhouse_connect.get_client(
            host=parts.hostname,
            port=parts.port or (8443 if parts.scheme == "https" else 8123),
            secure=parts.scheme == "https",
            username=settings.clickhouse_user,
            password=settings.clickhouse_password,
            database=database or "",
            connect_timeout=5,
            send_receive_timeout=60,
        )
    except Exception as exc:
        raise StoreError(f"cannot reach ClickHouse at {parts.scheme}://{parts.netloc}: {exc}") from exc


class Store:
    """Clients for one inferwatch database, one per thread, created on first use."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.database = settings.database
        self._local = threading.local()
        self._clients: list[Client] = []
        self._lock = threading.Lock()
        self._closed = False

    @classmethod
    def open(cls, settings: Settings) -> "Store":
        """Open (and create if needed) the database; fails fast with a :class:`StoreError`."""
        bootstrap = _open_client(settings, None)
        try:
            # Asked first: a runtime user may use the database but not create one (see db_users.py).
            if not bootstrap.command(f"EXISTS DATABASE {settings.database}"):
                clustered = settings.cluster and not settings.embedded
                on_cluster = f" ON CLUSTER {settings.cluster}" if clustered else ""
                bootstrap.command(f"CREATE DATABASE IF NOT EXISTS {settings.database}{on_cluster}")
        except Exception as exc:
            bootstrap.close()
            raise StoreError(f"cannot create database {settings.database}: {exc}") from exc
        store = cls(settings)
        store._adopt(bootstrap)
        return store

    def _adopt(self, client: Client) -> None:
        with self._lock:
            self._clients.append(client)

    @property
    def client(self) -> Client:
        """This thread's client (with the inferwatch database as its default)."""
        client = getattr(self._local, "client", None)
        if client is None:
            if self._closed:
                raise StoreError("the store is closed")
            client = _open_client(self.settings, self.database)
            self._local.client = client
            self._adopt(client)
        return client

    def table(self, name: str) -> str:
        """Fully qualified table name."""
        return f"{self.database}.{name}"

    def query(self, sql: str, parameters: dict[str, Any] | None = None, settings: dict[str, Any] | None = None
              ) -> QueryResult:
        """Run a parameterised SELECT (``{name:Type}`` placeholders) on this thread's client."""
        return self.client.query(sql, parameters=parameters, settings=settings)

    def command(self, sql: str, parameters: dict[str, Any] | None = None, settings: dict[str, Any] | None = None
                ) -> Any:
        """Run a statement that returns no rows."""
        return self.client.command(sql, parameters=parameters, settings=settings)

    def insert_columns(self, table: str, columns: Sequence[Sequence[Any]], column_names: Sequence[str],
                       settings: dict[str, Any] | None = None) -> None:
        """Column-oriented insert into ``table`` (unqualified name) of this database."""
        self.client.insert(self.table(table), columns, column_names=list(column_names), column_oriented=True,
                           settings=settings)

    def insert_native(self, table: str, data: bytes, column_names: Sequence[str],
                      settings: dict[str, Any] | None = None) -> None:
        """Insert pre-encoded Native blocks (see :mod:`native`) into ``table`` of this database."""
        self.client.raw_insert(self.table(table), list(column_names), data, settings=settings, fmt="Native")

    def close(self) -> None:
        """Close every client; afterwards this process may open another chDB directory."""
        with self._lock:
            self._closed = True
            clients, self._clients = self._clients, []
        for client in clients:
            try:
                client.close()
            except Exception:  # closing is best effort: the engine may already be gone
                pass
        self._local = threading.local()
