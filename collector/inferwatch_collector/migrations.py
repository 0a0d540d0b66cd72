"""ClickHouse schema migrations: one SQL source per step, rendered per deployment, applied once, recorded.

Why a renderer: the same schema has to run on embedded chDB and a single server (plain engines) and on a
cluster (``ON CLUSTER``, ``Replicated*`` engines, and for several shards ``<name>_local`` tables behind
``Distributed`` ones). Keeping one copy per target lets them drift; instead each ``migrations/NNNN_name.sql``
uses double-brace placeholders (see :func:`render`) and the target decides what they become.

Why a runner of our own: ClickHouse has no transactional DDL, so every statement is idempotent
(``IF NOT EXISTS``) and the runner records each file in ``schema_migrations`` as ``started``, then ``applied``
or ``failed``. A file left ``started``/``failed`` is *dirty*: the runner stops until someone looks at it and
reruns with ``force=True``. An applied file is identified by the SHA-256 of its source; editing it afterwards
is refused, because the database would silently no longer match the file.

Typical use::

    store = Store.open(settings)
    migrate(store, target_for(store.settings, store), progress=print)
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from importlib import resources
from typing import Any, Literal, Protocol

from .settings import Settings
from .store import Store

Mode = Literal["single", "replicated", "sharded"]
MODES: tuple[Mode, ...] = ("single", "replicated", "sharded")

#: Parameters every migration may use; retention values come from :class:`Settings` (see :func:`target_for`).
DEFAULT_PARAMS: Mapping[str, int] = {
    "retention_days": 90,
    "prompt_retention_days": 14,
    "rollup_1m_retention_days": 35,
    "rollup_1h_retention_days": 800,
}

MIGRATIONS_PACKAGE = "inferwatch_migrations"
MIGRATIONS_TABLE = "schema_migrations"

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,62}")
_FILE_NAME = re.compile(r"(\d{4})_[a-z0-9_]+\.sql")
_PLACEHOLDER = re.compile(r"\{\{\s*([a-z0-9_]+)\s*(?::(.*?))?\}\}", re.S)
_STATEMENT_END = re.compile(r";[ \t]*(?:\n|$)")
_ENGINE = re.compile(
    r"((?:|Replacing|Aggregating|Summing|Collapsing|VersionedCollapsing)MergeTree)\s*(?:\((.*)\))?", re.S
)
# Clustered DDL waits for every replica, so a later statement never runs against a half-applied one.
_CLUSTER_DDL_SETTINGS: dict[str, Any] = {"alter_sync": 2, "mutations_sync": 2}
_ERROR_CHARS = 4000


class MigrationError(RuntimeError):
    """A migration could not be rendered, was refused, or failed; the message names the file and the cause."""


def _ident(value: str, what: str) -> str:
    """Identifiers are pasted into DDL, so only plain names pass."""
    if not _IDENT.fullmatch(value):
        raise MigrationError(f"{what} must be a plain identifier (letters, digits, underscore), got {value!r}")
    return value


@dataclass(frozen=True)
class Target:
    """Where migrations run, which decides how they are rendered.

    ``single``: embedded chDB or one server. ``replicated``: one shard with N replicas (needs Keeper).
    ``sharded``: N shards x M replicas; tables become ``<name>_local`` plus a ``Distributed`` ``<name>``.
    ``replica_path`` None relies on the server's ``default_replica_path``/``default_replica_name``.
    """

    mode: Mode = "single"
    database: str = "inferwatch"
    cluster: str = ""
    replica_path: str | None = None
    params: Mapping[str, int] = field(default_factory=lambda: dict(DEFAULT_PARAMS))

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise MigrationError(f"unknown migration mode {self.mode!r} (expected one of {', '.join(MODES)})")
        _ident(self.database, "database")
        if self.clustered:
            _ident(self.cluster, f"cluster (required for mode {self.mode})")
        if self.replica_path is not None and not re.fullmatch(r"/[A-Za-z0-9_{}/.-]*", self.replica_path):
            raise MigrationError(f"replica_path must be a Keeper path like /clickhouse/tables/{{shard}}/..., "
                                 f"got {self.replica_path!r}")
        for key, value in self.params.items():
            _ident(key, "parameter name")
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise MigrationError(f"parameter {key} must be a positive integer, got {value!r}")

    @property
    def clustered(self) -> bool:
        """True for the targets whose DDL runs ``ON CLUSTER`` with replicated engines."""
        return self.mode != "single"


# --------------------------------------------------------------------------------------------------- render


def _engine(spec: str, target: Target) -> str:
    match = _ENGINE.fullmatch(spec.strip())
    if not match:
        raise MigrationError(f"{{{{engine:{spec}}}}}: expected a *MergeTree engine")
    name, args = match.group(1), (match.group(2) or "").strip()
    if not target.clustered:
        return f"{name}({args})" if args else name
    if target.replica_path:
        path_args = f"'{target.replica_path}', '{{replica}}'"
        args = f"{path_args}, {args}" if args else path_args
    return f"Replicated{name}({args})" if args else f"Replicated{name}"


def _table(name: str, target: Target) -> str:
    name = _ident(name.strip(), "table name")
    return f"{target.database}.{name}_local" if target.mode == "sharded" else f"{target.database}.{name}"


def _distributed(spec: str, target: Target) -> str:
    name, _, key = spec.partition(",")
    name, key = _ident(name.strip(), "table name"), key.strip()
    if not key:
        raise MigrationError(f"{{{{distributed:{spec}}}}}: needs a sharding key after the table name")
    if target.mode != "sharded":
        return ""
    db, cluster = target.database, target.cluster
    return (f"CREATE TABLE IF NOT EXISTS {db}.{name} ON CLUSTER {cluster} AS {db}.{name}_local\n"
            f"ENGINE = Distributed({cluster}, {db}, {name}_local, {key})")


def _settings(spec: str, target: Target) -> str:
    items = [item.strip() for item in spec.split(",") if item.strip()]
    if not target.clustered:
        # Replicated* tables deduplicate retried inserts by default; plain MergeTree needs a window for
        # insert_deduplication_token to work (on the table and on every MV target).
        items.append("non_replicated_deduplication_window = 1000")
    return "SETTINGS " + ", ".join(items) if items else ""


def render(sql: str, target: Target) -> list[str]:
    """Render one migration source into the statements to run on ``target``, in order.

    Placeholders: ``{{on_cluster}}``, ``{{engine:Spec}}``, ``{{t:name}}``, ``{{all:name}}`` (the whole table:
    on sharded targets its Distributed table, for a backfill that reads or writes every shard),
    ``{{distributed:name,key}}``,
    ``{{alter:name}}`` (``ALTER TABLE`` of the table and, when sharded, of its Distributed table too),
    ``{{settings: a = 1, ...}}``, ``{{ddl_settings}}`` and ``{{<param>}}`` from ``target.params``. Full-line
    ``--`` comments are dropped; statements end with ``;`` at the end of a line; empty ones are skipped
    (``{{distributed:...}}`` renders to nothing outside ``sharded``).
    """

    def substitute(match: re.Match[str]) -> str:
        key, arg = match.group(1), match.group(2)
        if arg is not None:
            arg = arg.strip()
        if key == "on_cluster":
            return f"ON CLUSTER {target.cluster}" if target.clustered else ""
        if key == "ddl_settings":
            return "SETTINGS alter_sync = 2" if target.clustered else ""
        if key == "settings":
            return _settings(arg or "", target)
        if key in ("engine", "t", "all", "distributed") and not arg:
            raise MigrationError(f"{{{{{key}:...}}}} needs an argument")
        if key == "engine":
            return _engine(arg or "", target)
        if key == "t":
            return _table(arg or "", target)
        if key == "all":
            return f"{target.database}.{_ident((arg or '').strip(), 'table name')}"
        if key == "distributed":
            return _distributed(arg or "", target)
        if arg is None and key in target.params:
            return str(target.params[key])
        raise MigrationError(f"unknown placeholder {match.group(0)!r}")

    text = "\n".join(line for line in sql.splitlines() if not line.lstrip().startswith("--"))
    rendered: list[str] = []
    for statement in _STATEMENT_END.split(text):
        for variant in _alter_variants(statement.strip(), target):
            variant = _PLACEHOLDER.sub(substitute, variant).strip()
            if variant:
                rendered.append(variant)
    return rendered


_ALTER = re.compile(r"\{\{\s*alter\s*:\s*([^}]*)\}\}")


def _alter_variants(statement: str, target: Target) -> list[str]:
    """``{{alter:name}} ADD COLUMN ...``: one ALTER of the table, and on sharded targets a second one of its
    Distributed table (a Distributed table copies its columns when created, so it must be altered too)."""
    match = _ALTER.search(statement)
    if match is None:
        return [statement]
    name = _ident(match.group(1).strip(), "table name")
    if len(_ALTER.findall(statement)) != 1 or not statement.startswith(match.group(0)):
        raise MigrationError(f"{{{{alter:{name}}}}} must appear once, at the start of its statement")
    head = f"ALTER TABLE {{{{t:{name}}}}} {{{{on_cluster}}}}"
    tables = [_ALTER.sub(head, statement, count=1)]
    if target.mode == "sharded":
        tables.append(_ALTER.sub(f"ALTER TABLE {target.database}.{name} ON CLUSTER {target.cluster}",
                                 statement, count=1))
    return tables


# --------------------------------------------------------------------------------------------------- files


@dataclass(frozen=True)
class MigrationFile:
    """One ``NNNN_name.sql`` source; ``checksum`` (SHA-256 of the text) identifies what was applied."""

    version: int
    name: str
    text: str

    @classmethod
    def from_text(cls, name: str, text: str) -> MigrationFile:
        """Build from a file name (``0001_init.sql``) and its source, checking the name."""
        match = _FILE_NAME.fullmatch(name)
        if not match:
            raise MigrationError(f"migration file {name!r} must be named NNNN_lower_snake.sql")
        return cls(version=int(match.group(1)), name=name, text=text)

    @property
    def checksum(self) -> str:
        """SHA-256 of the source (not the rendering: changing a parameter is not an edit)."""
        return hashlib.sha256(self.text.encode("utf-8")).hexdigest()


def migration_files(package: str = MIGRATIONS_PACKAGE) -> list[MigrationFile]:
    """The ``*.sql`` migrations shipped in ``package``, by version.

    Read through importlib.resources so they come from the installed package, wherever it lives.
    """
    files = [MigrationFile.from_text(entry.name, entry.read_text(encoding="utf-8"))
             for entry in resources.files(package).iterdir() if entry.name.endswith(".sql")]
    return _in_order(files)


def _in_order(files: Sequence[MigrationFile]) -> list[MigrationFile]:
    ordered = sorted(files, key=lambda f: f.version)
    for before, after in itertools.pairwise(ordered):
        if before.version == after.version:
            raise MigrationError(f"two migrations share version {after.version}: {before.name}, {after.name}")
    return ordered


# --------------------------------------------------------------------------------------------------- target


class Queryable(Protocol):
    """What :func:`target_for` needs: a :class:`Store` or a clickhouse-connect client."""

    def query(self, sql: str, /, parameters: dict[str, Any] | None = None) -> Any: ...


def target_for(settings: Settings, conn: Queryable) -> Target:
    """The target that matches this deployment.

    Embedded chDB has no cluster, so it is always ``single``. On a server, ``migration_mode`` decides; ``auto``
    means ``single`` without ``settings.cluster``, else asks ``system.clusters``: one shard is ``replicated``,
    more are ``sharded``.
    """
    params = dict(DEFAULT_PARAMS)
    params.update(retention_days=settings.retention_days, prompt_retention_days=settings.prompt_retention_days)
    mode = settings.migration_mode
    if settings.embedded:
        if mode not in ("auto", "single"):
            raise MigrationError(f"migration_mode={mode} needs a ClickHouse cluster; embedded chDB is single")
        mode = "single"
    elif mode == "auto":
        mode = _cluster_mode(conn, settings.cluster) if settings.cluster else "single"
    elif mode != "single" and not settings.cluster:
        raise MigrationError(f"migration_mode={mode} needs INFERWATCH_CLUSTER (the cluster name)")
    cluster = settings.cluster if mode != "single" else ""
    return Target(mode=mode, database=settings.database, cluster=cluster, params=params)


def _cluster_mode(conn: Queryable, cluster: str) -> Mode:
    result = conn.query("SELECT count(DISTINCT shard_num) FROM system.clusters WHERE cluster = {c:String}",
                        parameters={"c": cluster})
    shards = int(result.result_rows[0][0]) if result.result_rows else 0
    if shards == 0:
        raise MigrationError(f"cluster {cluster!r} is not in system.clusters of this server")
    return "replicated" if shards == 1 else "sharded"


# --------------------------------------------------------------------------------------------------- runner


@dataclass(frozen=True)
class MigrationStatus:
    """One migration as the database and this package see it (for ``inferwatch-server migrate --status``).

    ``status``: ``applied``, ``started``/``failed`` (dirty), ``pending`` (not run), ``changed`` (applied, but
    the shipped file differs) or ``unknown`` (recorded by a newer inferwatch; this package lacks the file).
    """

    version: int
    name: str
    status: str
    checksum: str = ""
    mode: str = ""
    error: str = ""
    applied_at: datetime | None = None


def _meta_engine(target: Target) -> str:
    if target.mode == "sharded":
        # One replication group over every shard: the record must be readable from whichever node runs next.
        return ("ReplicatedReplacingMergeTree('/clickhouse/tables/{uuid}/schema_migrations', '{shard}_{replica}', "
                "seq)")
    return _engine("ReplacingMergeTree(seq)", target)


def meta_statements(target: Target) -> list[str]:
    """DDL for the database and ``schema_migrations`` on ``target`` (the runner creates them before anything)."""
    on_cluster = f" ON CLUSTER {target.cluster}" if target.clustered else ""
    return [
        f"CREATE DATABASE IF NOT EXISTS {target.database}{on_cluster}",
        f"CREATE TABLE IF NOT EXISTS {target.database}.{MIGRATIONS_TABLE}{on_cluster} (\n"
        "    version UInt32, name String, checksum String, status LowCardinality(String),\n"
        "    mode LowCardinality(String), error String, applied_at DateTime64(6, 'UTC'), seq UInt64\n"
        f") ENGINE = {_meta_engine(target)} ORDER BY version",
    ]


def _recorded(store: Store, database: str) -> dict[int, MigrationStatus]:
    """Latest record per version; argMax over ``seq`` reads correctly before the replacing merge ran."""
    exists = store.query(f"EXISTS TABLE {_ident(database, 'database')}.{MIGRATIONS_TABLE}").result_rows
    if not exists or not exists[0][0]:
        return {}
    rows = store.query(
        f"SELECT version, argMax(name, seq), argMax(status, seq), argMax(checksum, seq), argMax(mode, seq), "
        f"argMax(error, seq), argMax(applied_at, seq) FROM {database}.{MIGRATIONS_TABLE} "
        f"GROUP BY version ORDER BY version"
    ).result_rows
    return {int(v): MigrationStatus(int(v), name, status, checksum, mode, error, applied_at)
            for v, name, status, checksum, mode, error, applied_at in rows}


class _Recorder:
    """Appends status rows; ``seq`` strictly increases so the latest row always wins."""

    def __init__(self, store: Store, target: Target) -> None:
        self._store, self._target, self._seq = store, target, 0

    def __call__(self, file: MigrationFile, state: str, error: str = "") -> None:
        self._seq = max(time.time_ns(), self._seq + 1)
        row = [file.version, file.name, file.checksum, state, self._target.mode, error[:_ERROR_CHARS],
               datetime.now(UTC), self._seq]
        self._store.client.insert(f"{self._target.database}.{MIGRATIONS_TABLE}", [row],
                                  column_names=["version", "name", "checksum", "status", "mode", "error",
                                                "applied_at", "seq"])


def _plan(files: Sequence[MigrationFile], recorded: Mapping[int, MigrationStatus], target: Target,
          force: bool) -> list[MigrationFile]:
    """The files to run, or a MigrationError when the database and the files disagree."""
    shipped = {f.version for f in files}
    for version, record in recorded.items():
        if version not in shipped:
            raise MigrationError(f"{record.name}: recorded in {target.database}.{MIGRATIONS_TABLE} but not "
                                 f"shipped with this inferwatch (the database is newer; upgrade inferwatch)")
    applied = [v for v, r in recorded.items() if r.status == "applied"]
    todo: list[MigrationFile] = []
    for file in files:
        found = recorded.get(file.version)
        if found is None:
            if applied and file.version < max(applied):
                raise MigrationError(f"{file.name}: added below already-applied version {max(applied):04d}; "
                                     f"new migrations must take a higher number")
            todo.append(file)
        elif found.status == "applied":
            if found.checksum != file.checksum:
                raise MigrationError(f"{file.name}: applied migration was edited (checksum {found.checksum[:12]} "
                                     f"in the database, {file.checksum[:12]} in the file); revert the edit and "
                                     f"put the change in a new migration")
            if found.mode != target.mode:
                raise MigrationError(f"{file.name}: applied as {found.mode}, but the target is {target.mode}; "
                                     f"a schema cannot be converted between modes in place")
        elif force:
            todo.append(file)
        else:
            raise MigrationError(f"{file.name}: dirty (left {found.status}"
                                 f"{': ' + found.error if found.error else ''}); fix the cause, then rerun with "
                                 f"force=True (statements are idempotent)")
    return todo


def migrate(store: Store, target: Target, progress: Callable[[str], Any] | None = None, *,
            files: Sequence[MigrationFile] | None = None, force: bool = False) -> list[str]:
    """Apply the pending migrations in version order and return the names of those applied.

    Safe to run at every start: nothing happens when all files are applied, not even a ``CREATE ... IF NOT
    EXISTS`` (the services run it as a runtime user without DDL rights, see :mod:`.db_users`).
    Refuses (``MigrationError``,
    nothing run) when an applied file was edited or applied for another mode, a file is dirty (unless
    ``force``), a new file is numbered below an applied one, or the database holds migrations this package
    does not ship. A failing statement is recorded as ``failed`` and raised with the file name, statement
    number and the ClickHouse error. ``files`` defaults to :func:`migration_files`.
    """
    say = progress or (lambda message: None)
    ordered = _in_order(files if files is not None else migration_files())
    recorded = _recorded(store, target.database)
    todo = _plan(ordered, recorded, target, force)
    if not todo and recorded:
        return []  # up to date: no DDL at all, so a runtime user without DDL rights starts too
    try:
        for statement in meta_statements(target):
            store.command(statement)
    except Exception as exc:
        if "ACCESS_DENIED" not in str(exc) and "Not enough privileges" not in str(exc):
            raise
        raise MigrationError(
            f"{len(todo)} migration(s) pending ({', '.join(f.name for f in todo)}) and ClickHouse user "
            f"{store.settings.clickhouse_user!r} may not run DDL: run `inferwatch-server migrate` as the "
            f"migration user first") from exc
    record = _Recorder(store, target)
    done: list[str] = []
    for file in todo:
        statements = render(file.text, target)
        say(f"{file.name}: applying {len(statements)} statements ({target.mode})")
        started = time.monotonic()
        record(file, "started")
        for number, statement in enumerate(statements, start=1):
            try:
                store.command(statement, settings=_CLUSTER_DDL_SETTINGS if target.clustered else None)
            except Exception as exc:  # any driver/server error: record it, then stop
                head = " ".join(statement.split())[:80]
                message = f"statement {number} of {len(statements)} ({head}...) failed: {str(exc).strip()}"
                # The statement's error matters more than a failed record; a "started" row is dirty as well.
                with contextlib.suppress(Exception):
                    record(file, "failed", message)
                raise MigrationError(f"{file.name}: {message}") from exc
        record(file, "applied")
        say(f"{file.name}: applied in {time.monotonic() - started:.1f} s")
        done.append(file.name)
    return done


def status(store: Store, files: Sequence[MigrationFile] | None = None) -> list[MigrationStatus]:
    """Every shipped and every recorded migration with its state, by version; runs nothing."""
    shipped = {f.version: f for f in _in_order(files if files is not None else migration_files())}
    recorded = _recorded(store, store.database)
    out: list[MigrationStatus] = []
    for version in sorted(shipped.keys() | recorded.keys()):
        file, record = shipped.get(version), recorded.get(version)
        if record is None:
            assert file is not None
            out.append(MigrationStatus(version, file.name, "pending", file.checksum))
        elif file is None:
            out.append(replace(record, status="unknown"))
        elif record.status == "applied" and record.checksum != file.checksum:
            out.append(replace(record, status="changed"))
        else:
            out.append(record)
    return out
