"""The runtime ClickHouse user: its statements per target, its input checks, and grants that cover the code's SQL.

No ClickHouse server runs here and chDB has no access management, so the statements are checked by rendering and
parsing them (``formatQuery`` in chDB), and the grants by scanning every SQL string the services can run.
"""

from __future__ import annotations

import ast
import hashlib
import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from inferwatch_collector import db_users
from inferwatch_collector.db_users import (
    RuntimeUser,
    RuntimeUserError,
    grants_of,
    password_hash,
    runtime_user_from,
    runtime_user_statements,
)
from inferwatch_collector.migrations import MigrationError, Target, migrate, migration_files
from inferwatch_collector.settings import Settings
from inferwatch_collector.store import Store

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "a-runtime-password-1"
USER = RuntimeUser("inferwatch_app", PASSWORD)
TARGETS = {
    "single": Target(mode="single", database="inferwatch"),
    "replicated": Target(mode="replicated", database="inferwatch", cluster="iw_cluster"),
    "sharded": Target(mode="sharded", database="inferwatch", cluster="iw_cluster"),
}
# Privileges that would let a leaked runtime password change the schema or the accounts.
FORBIDDEN = ("CREATE", "DROP", "TRUNCATE", "ALTER TABLE", "ALTER COLUMN", "ACCESS MANAGEMENT", "ALL",
             "SYSTEM", "OPTIMIZE", "INTROSPECTION", "SOURCES", "REMOTE", "URL", "FILE", "ADMIN OPTION")


def formatted(store: Store, statement: str) -> str:
    return store.query("SELECT formatQuery({q:String})", parameters={"q": statement}).result_rows[0][0]


# --- the statements ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", TARGETS)
def test_statements_parse_and_carry_only_the_runtime_grants(store, mode):
    target = TARGETS[mode]
    statements = runtime_user_statements(USER, target, salt="00ff")
    assert [s.split()[0] for s in statements] == ["CREATE", "ALTER", "GRANT"]
    for statement in statements:
        assert formatted(store, statement)  # ClickHouse's own parser accepts it
        assert PASSWORD not in statement  # only the salted hash is sent
        assert ("ON CLUSTER iw_cluster" in statement) == target.clustered  # every server gets the same user
    create, alter, grant = statements
    digest = hashlib.sha256(f"{PASSWORD}00ff".encode()).hexdigest()
    assert f"IDENTIFIED WITH sha256_hash BY '{digest}' SALT '00ff'" in create and digest in alter
    assert "DEFAULT DATABASE inferwatch" in create
    assert grant.endswith("TO inferwatch_app WITH REPLACE OPTION")  # grants an older version gave are dropped

    items = re.search(r"^GRANT(?: ON CLUSTER \w+)? (.*) TO ", grant).group(1)
    granted = {obj: {p.strip() for p in privileges.split(",")}
               for privileges, obj in re.findall(r"((?:[A-Z ]+,\s*)*[A-Z ]+) ON ([\w.*]+)", items)}
    expected = {"inferwatch.*": {"SELECT", "INSERT", "ALTER UPDATE", "ALTER DELETE"}, "system.parts": {"SELECT"}}
    if target.clustered:
        expected["system.clusters"] = {"SELECT"}
    if mode == "sharded":
        expected["*.*"] = {"CLUSTER"}
    assert granted == expected
    for privileges in granted.values():
        assert not privileges & set(FORBIDDEN)


def test_a_fresh_salt_each_time_and_the_hash_is_clickhouses_formula():
    first, second = (runtime_user_statements(USER, TARGETS["single"])[0] for _ in range(2))
    assert first != second
    salt = re.search(r"SALT '([0-9a-f]+)'", first).group(1)
    assert f"BY '{password_hash(PASSWORD, salt)}'" in first
    assert password_hash("abc", "01") == hashlib.sha256(b"abc01").hexdigest()


@pytest.mark.parametrize("name", ["inferwatch-app", "Inferwatch", "app; DROP USER x", "app`", "default", "",
                                  "1app", "a" * 64, "app name"])
def test_user_names_that_are_not_plain_identifiers_are_refused(name):
    with pytest.raises(RuntimeUserError, match="INFERWATCH_RUNTIME_USER"):
        RuntimeUser(name, PASSWORD)


def test_short_passwords_and_the_migration_account_are_refused():
    with pytest.raises(RuntimeUserError, match="INFERWATCH_RUNTIME_PASSWORD"):
        RuntimeUser("inferwatch_app", "short")
    with pytest.raises(RuntimeUserError, match="must differ"):
        runtime_user_from(Settings(clickhouse_user="inferwatch", runtime_user="inferwatch",
                                   runtime_password=PASSWORD))
    assert runtime_user_from(Settings(runtime_user="")) is None
    assert runtime_user_from(Settings(runtime_user="iw_app", runtime_password=PASSWORD)) == RuntimeUser(
        "iw_app", PASSWORD)
    assert PASSWORD not in repr(USER)


def test_settings_refuse_a_user_name_that_is_no_identifier():
    with pytest.raises(ValidationError, match="runtime_user"):
        Settings(runtime_user="app'; DROP")


def test_the_settings_and_db_users_agree_on_names():
    assert db_users.USER_NAME.fullmatch("inferwatch_app")
    with pytest.raises(ValidationError):
        Settings(runtime_user="default")


# --- a runtime user starts without DDL rights -------------------------------------------------------------------
class NoDdl:
    """The store as a runtime user sees it: a DDL statement is refused the way ClickHouse refuses it."""

    def __init__(self, store: Store) -> None:
        self._store, self.settings, self.database = store, store.settings, store.database
        self.client = store.client
        self.ddl: list[str] = []

    def query(self, *args, **kwargs):
        return self._store.query(*args, **kwargs)

    def command(self, sql: str, *args, **kwargs):
        if re.match(r"\s*(CREATE|DROP|ALTER TABLE \S+ (ADD|MODIFY|DROP))", sql):
            self.ddl.append(sql)
            raise RuntimeError("Code: 497. DB::Exception: inferwatch_app: Not enough privileges. (ACCESS_DENIED)")
        return self._store.command(sql, *args, **kwargs)


def test_an_up_to_date_schema_runs_no_ddl_so_the_runtime_user_starts(store):
    runtime = NoDdl(store)  # the store fixture is migrated
    assert migrate(runtime, TARGETS["single"]) == []
    assert runtime.ddl == []


def test_pending_migrations_under_a_runtime_user_say_what_to_run(store):
    files = migration_files()
    runtime = NoDdl(store)
    extra = type(files[0]).from_text("9999_later.sql", "CREATE TABLE IF NOT EXISTS {{t:later}} (x UInt8) "
                                                       "ENGINE = {{engine:MergeTree}} ORDER BY x;\n")
    with pytest.raises(MigrationError, match=r"9999_later.sql.*may not run DDL.*inferwatch-server migrate"):
        migrate(runtime, TARGETS["single"], files=[*files, extra])


def test_opening_an_existing_database_creates_nothing(store, monkeypatch):
    from inferwatch_collector import store as store_module

    sent: list[str] = []
    real = store_module._open_client

    def recording(settings, database):
        client = real(settings, database)
        command = client.command

        def spy(sql, *args, **kwargs):
            sent.append(sql)
            return command(sql, *args, **kwargs)

        client.command = spy
        return client

    monkeypatch.setattr(store_module, "_open_client", recording)
    store.close()  # one chDB directory per process: reopen the same one
    reopened = Store.open(store.settings)
    try:
        assert sent and not [sql for sql in sent if sql.lstrip().startswith("CREATE")]
    finally:
        reopened.close()


# --- the grants cover the code's SQL ----------------------------------------------------------------------------
RUNTIME_PACKAGES = ["collector/inferwatch_collector", "alerts/inferwatch_alerts", "server/inferwatch_server",
                    "dashboard"]
# Modules only the migration user runs: the accounts.
MIGRATION_USER_MODULES = {"collector/inferwatch_collector/db_users.py"}
# Statements the runtime user never reaches, and why.
NOT_AT_RUNTIME = {
    ("collector/inferwatch_collector/store.py", "CREATE DATABASE"): "only when the database is missing, i.e. "
    "before `migrate` ran (Store.open asks EXISTS DATABASE first)",
    ("collector/inferwatch_collector/migrations.py", ("CREATE ", "ALTER TABLE {{", "ALTER TABLE {}.{} ON CLUSTER")):
    "schema DDL runs only while migrations are pending, as the migration user: migrate() returns before any DDL "
    "when the schema is up to date",
}
STATEMENT = re.compile(r"\s*(SELECT|WITH|INSERT INTO|ALTER TABLE|DELETE FROM|CREATE|DROP|TRUNCATE|OPTIMIZE|"
                       r"SYSTEM|RENAME|EXCHANGE|KILL|GRANT|REVOKE|ATTACH|DETACH|EXISTS|SHOW|DESCRIBE|SET|USE|"
                       r"UNDROP|BACKUP|RESTORE|MOVE)\s")
# system tables any user may read (ClickHouse's select_from_system_db_requires_grant exceptions).
OPEN_SYSTEM_TABLES = {"tables", "columns", "databases", "one", "numbers", "contributors"}


def sql_strings(path: Path) -> list[str]:
    """Every string literal and f-string of ``path`` (f-string fields as ``{}``) that starts like a statement;
    docstrings are prose and skipped."""
    tree = ast.parse(path.read_text())
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                  and node.body and isinstance(node.body[0], ast.Expr)
                  and isinstance(node.body[0].value, ast.Constant)}
    found = []
    inside_fstrings = {id(v) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for v in node.values}
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            text = "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) in docstrings or id(node) in inside_fstrings:
                continue
            text = node.value
        else:
            continue
        if STATEMENT.match(text) or "ON CLUSTER" in text:  # a table expression with ON CLUSTER, too
            found.append(" ".join(text.split()))
    return found


def required_privileges(statement: str) -> set[str]:
    """What ClickHouse checks for ``statement``, as ``PRIVILEGE ON scope`` strings; ``?`` for a verb the runtime
    must never run."""
    match = STATEMENT.match(statement)
    verb = match.group(1) if match else ""
    needed: set[str] = set()
    if not verb:  # a fragment: ``<table> ON CLUSTER <cluster>`` for a mutation built elsewhere
        pass
    elif verb in ("SELECT", "WITH", "EXISTS", "SHOW", "DESCRIBE"):  # SHOW/EXISTS: implied by any table grant
        needed.add("SELECT ON db")
    elif verb == "INSERT INTO":
        needed.add("INSERT ON db")
        if re.search(r"\bSELECT\b", statement):
            needed.add("SELECT ON db")
    elif verb == "ALTER TABLE":
        kinds = set(re.findall(r"\b(UPDATE|DELETE)\b", statement))
        if not kinds or re.search(r"\b(ADD|MODIFY|DROP|MATERIALIZE|RENAME|ATTACH|DETACH|FREEZE)\b", statement):
            needed.add(f"? {statement}")
        needed |= {f"ALTER {kind} ON db" for kind in kinds}
    elif verb == "DELETE FROM":  # lightweight delete
        needed.add("ALTER DELETE ON db")
    else:
        needed.add(f"? {statement}")
    if "ON CLUSTER" in statement:
        needed.add("CLUSTER ON *.*")
    for table in re.findall(r"\bsystem\.(\w+)", statement):
        if table not in OPEN_SYSTEM_TABLES:
            needed.add(f"SELECT ON system.{table}")
    return needed


def granted(target: Target) -> set[str]:
    out = set()
    for item in grants_of(target):
        privileges, scope = item.rsplit(" ON ", 1)
        scope = "db" if scope == f"{target.database}.*" else scope
        out |= {f"{p.strip()} ON {scope}" for p in privileges.split(",")}
    return out


def runtime_statements() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for package in RUNTIME_PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            name = path.relative_to(ROOT).as_posix()
            if name in MIGRATION_USER_MODULES:
                continue
            statements = [s for s in sql_strings(path)
                          if not any(name == module and s.startswith(prefix) for module, prefix in NOT_AT_RUNTIME)]
            if statements:
                out[name] = statements
    return out


def test_the_scan_finds_the_statements_it_must_cover():
    found = runtime_statements()
    flat = [s for statements in found.values() for s in statements]
    assert len(flat) > 40
    assert any(s.startswith("ALTER TABLE") and "UPDATE" in s for s in flat)  # forget, recompute
    assert any(s.startswith("ALTER TABLE") and "DELETE" in s for s in flat)  # forget
    assert any(s.startswith("DELETE FROM") and "ON CLUSTER" in s for s in flat)  # sharded retention
    assert any(s.startswith("INSERT INTO") for s in flat)  # the scheduler lease
    assert any("FROM system.clusters" in s for s in flat)  # target_for, at every service start
    assert any(s.startswith("{}") and "ON CLUSTER" in s for s in flat)  # forget's sharded mutation target
    assert required_privileges("DROP TABLE inferwatch.llm_calls") == {"? DROP TABLE inferwatch.llm_calls"}
    assert required_privileges("ALTER TABLE t ADD COLUMN x UInt8") == {"? ALTER TABLE t ADD COLUMN x UInt8"}
    assert "SELECT ON system.parts" in required_privileges("SELECT count() FROM system.parts")


@pytest.mark.parametrize("mode", TARGETS)
def test_every_statement_the_services_run_is_covered_by_the_runtime_grants(mode):
    target = TARGETS[mode]
    have = granted(target)
    missing = {}
    for module, statements in runtime_statements().items():
        for statement in statements:
            if "ON CLUSTER" in statement and mode != "sharded":
                continue  # run only on sharded targets (forget, retention, recompute choose by mode)
            if "system.clusters" in statement and mode == "single":
                continue  # asked only when a cluster is configured (target_for, migration_mode=auto)
            needed = required_privileges(statement)
            lacking = needed - have
            if lacking:
                missing.setdefault(module, []).append((statement[:100], sorted(lacking)))
    assert not missing, f"runtime SQL the {mode} runtime user may not run (add a grant or move it to migrate): " \
                        f"{missing}"


# --- the migrate verb -------------------------------------------------------------------------------------------
def test_migrate_on_embedded_chdb_says_it_creates_no_user(tmp_path, monkeypatch, capsys):
    from inferwatch_server.cli import main

    monkeypatch.setenv("INFERWATCH_RUNTIME_USER", "inferwatch_app")
    monkeypatch.setenv("INFERWATCH_RUNTIME_PASSWORD", PASSWORD)
    assert main(["--data-dir", str(tmp_path / "data"), "migrate"]) == 0
    out = capsys.readouterr().out
    assert "embedded chDB has no users" in out and PASSWORD not in out


def test_migrate_refuses_a_bad_runtime_user_before_touching_the_database(tmp_path, monkeypatch, capsys):
    from inferwatch_server.cli import main

    monkeypatch.setenv("INFERWATCH_RUNTIME_USER", "inferwatch_app")
    monkeypatch.setenv("INFERWATCH_RUNTIME_PASSWORD", "short")
    assert main(["--data-dir", str(tmp_path / "data"), "migrate"]) != 0
    assert "INFERWATCH_RUNTIME_PASSWORD" in capsys.readouterr().err
    assert not (tmp_path / "data").exists()
