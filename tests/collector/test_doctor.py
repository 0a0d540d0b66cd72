"""``inferwatch-server doctor`` on a healthy and on broken setups (through a parser built like the CLI's)."""

from __future__ import annotations

import argparse
import json
import os
import threading
import time
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from inferwatch_collector.migrations import migrate, target_for
from inferwatch_collector.settings import Settings
from inferwatch_collector.spool import Spool, SpoolPart
from inferwatch_collector.store import Store
from inferwatch_server.cli import doctor as doctor_cli


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="inferwatch-server")
    parser.add_argument("--data-dir")
    sub = parser.add_subparsers(dest="command", required=True)
    doctor_cli.register(sub)
    return parser


@pytest.fixture(autouse=True)
def clean_env(monkeypatch, tmp_path):
    for name in list(os.environ):
        if name.startswith("INFERWATCH_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)


def doctor(capsys, *argv: str, skip_subcommand: bool = False) -> tuple[int, dict[str, dict]]:
    """Run ``[argv] doctor --json --timeout 1`` (``argv`` already holds ``doctor ...`` with ``skip_subcommand``)."""
    command = [*argv, "--json", "--timeout", "1"] if skip_subcommand else [*argv, "doctor", "--json", "--timeout", "1"]
    args = build_parser().parse_args(command)
    code = args.func(args)
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] == (code == 0)
    return code, {check["name"]: check for check in report["checks"]}


def migrated(data_dir) -> None:
    settings = Settings(data_dir=data_dir)
    store = Store.open(settings)
    try:
        migrate(store, target_for(settings, store))
    finally:
        store.close()


def test_fresh_database_needs_migrate_then_everything_is_ok(tmp_path, capsys):
    data_dir = tmp_path / "data"
    code, checks = doctor(capsys, "--data-dir", str(data_dir))
    assert code == 1
    assert checks["config"]["status"] == "ok" and checks["connectivity"]["status"] == "ok"
    assert checks["schema"]["status"] == "fail" and "inferwatch-server migrate" in checks["schema"]["detail"]
    assert "0001_init" in checks["schema"]["detail"]

    migrated(data_dir)
    code, checks = doctor(capsys, "--data-dir", str(data_dir))
    assert code == 0, checks
    assert {name: check["status"] for name, check in checks.items()} == {
        "config": "ok", "prices": "ok", "connectivity": "ok", "schema": "ok", "data_dir": "ok", "spool": "ok"}
    assert "migrations applied (single)" in checks["schema"]["detail"]

    args = build_parser().parse_args(["--data-dir", str(data_dir), "doctor"])  # the human-readable report
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert "[ok  ] schema" in out and "no problems found" in out


def test_invalid_settings_are_named_and_the_rest_skipped(capsys, monkeypatch):
    monkeypatch.setenv("INFERWATCH_PORT", "not-a-port")
    monkeypatch.setenv("INFERWATCH_DATABASE", "drop table")
    code, checks = doctor(capsys)
    assert code == 1
    detail = checks["config"]["detail"]
    assert checks["config"]["status"] == "fail" and "INFERWATCH_PORT" in detail and "INFERWATCH_DATABASE" in detail
    assert checks["connectivity"]["status"] == "skip" and checks["schema"]["status"] == "skip"


def test_broken_price_file_is_reported(tmp_path, capsys, monkeypatch):
    bad = tmp_path / "prices.yaml"
    bad.write_text("models: [this is: not, a: {price table")
    monkeypatch.setenv("INFERWATCH_PRICES_FILE", str(bad))
    migrated(tmp_path / "data")
    code, checks = doctor(capsys, "--data-dir", str(tmp_path / "data"))
    assert code == 1 and checks["prices"]["status"] == "fail" and str(bad) in checks["prices"]["detail"]
    assert checks["schema"]["status"] == "ok"


def test_unreachable_server_fails_fast(capsys, monkeypatch):
    monkeypatch.setenv("INFERWATCH_CLICKHOUSE_URL", "http://127.0.0.1:9")  # discard port: nothing listens
    started = time.monotonic()
    code, checks = doctor(capsys)
    assert time.monotonic() - started < 10
    assert code == 1 and checks["connectivity"]["status"] == "fail"
    assert "INFERWATCH_CLICKHOUSE_URL" in checks["connectivity"]["detail"]
    assert checks["schema"]["status"] == "skip"
    assert "data_dir" not in checks  # server mode has no embedded data directory


def test_edited_migration_unusable_spool_and_leftover_batches(tmp_path, capsys, monkeypatch):
    data_dir = tmp_path / "data"
    migrated(data_dir)
    store = Store.open(Settings(data_dir=data_dir))
    try:  # record version 1 as applied with another checksum: what an edited migration file looks like
        store.client.insert("inferwatch.schema_migrations",
                            [[1, "0001_init", "0" * 64, "applied", "single", "", datetime.now(UTC),
                              time.time_ns() + 10**12]],
                            column_names=["version", "name", "checksum", "status", "mode", "error", "applied_at",
                                          "seq"])
    finally:
        store.close()
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("INFERWATCH_SPOOL_DIR", str(blocker / "spool"))
    code, checks = doctor(capsys, "--data-dir", str(data_dir))
    assert code == 1
    assert checks["schema"]["status"] == "fail" and "0001_init" in checks["schema"]["detail"]
    assert "edited" in checks["schema"]["detail"]
    assert checks["spool"]["status"] == "fail" and "not a directory" in checks["spool"]["detail"]

    spool = Spool(tmp_path / "spool", max_bytes=10**6)  # batches a stopped collector left behind
    spool.append("b1", [SpoolPart("llm_calls", ("project_id",), b"\0", 1)])
    spool.close()
    monkeypatch.setenv("INFERWATCH_SPOOL_DIR", str(tmp_path / "spool"))
    _, checks = doctor(capsys, "--data-dir", str(data_dir))
    assert checks["spool"]["status"] == "warn" and "1 batch(es)" in checks["spool"]["detail"]


class _Readyz(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (http.server's naming)
        body = json.dumps({"status": "unavailable", "problems": ["writer thread is not running"]}).encode()
        self.send_response(503 if self.path == "/readyz" else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_a_running_collector_that_is_not_ready_is_reported(capsys, monkeypatch):
    monkeypatch.setenv("INFERWATCH_CLICKHOUSE_URL", "http://127.0.0.1:9")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Readyz)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        code, checks = doctor(capsys, "doctor", "--url", url, skip_subcommand=True)
    finally:
        server.shutdown()
    assert code == 1
    assert checks["collector"]["status"] == "fail"
    assert "503" in checks["collector"]["detail"] and "writer thread is not running" in checks["collector"]["detail"]
