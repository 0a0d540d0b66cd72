"""``inferwatch-server doctor``: what is wrong with this installation, checked in the order things depend on.

1. configuration: the ``INFERWATCH_*`` settings validate; the price file (if any) parses;
2. connectivity: the ClickHouse server answers ``/ping`` within a short timeout and accepts the credentials (or
   the embedded data directory opens);
3. schema: every shipped migration is applied, none is dirty, edited, unknown or applied for another mode;
4. directories: the data directory (embedded) and the spool directory are writable; a spool left with batches
   while no collector holds it is reported (they are replayed when the collector starts);
5. optionally a running collector's ``/readyz``.

Each check gives ``ok``, ``warn`` (works, but look) or ``fail`` with what to do; a later check that depends on a
failed one is reported as ``skip``. The command exits 1 when anything failed.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

import httpx
from pydantic import ValidationError

from .settings import Settings

OK, WARN, FAIL, SKIP = "ok", "warn", "fail", "skip"


@dataclass(frozen=True)
class Check:
    name: str
    status: str
    detail: str

    def as_dict(self) -> dict[str, str]:
        return asdict(self)


def _config(make_settings: Callable[[], Settings]) -> tuple[Settings | None, list[Check]]:
    try:
        settings = make_settings()
    except ValidationError as exc:
        problems = "; ".join(
            f"INFERWATCH_{'_'.join(str(p) for p in err['loc']).upper()}: {err['msg']}" for err in exc.errors())
        return None, [Check("config", FAIL, f"settings do not validate: {problems}")]
    checks = [Check("config", OK, "settings validate ("
                    + ("embedded chDB at " + str(settings.data_dir) if settings.embedded
                       else f"ClickHouse at {settings.clickhouse_url}, database {settings.database}") + ")")]
    if settings.prices_file:
        from .cost.price_table import load_table

        try:
            table = load_table(settings.prices_file)
        except Exception as exc:  # PriceFileError, OSError, YAML/JSON errors: all mean "fix the file"
            checks.append(Check("prices", FAIL, f"price file {settings.prices_file} cannot be used: {exc}"))
        else:
            checks.append(Check("prices", OK, f"price file {settings.prices_file} parses "
                                f"({len(table.models)} models, price version {table.version})"))
    else:
        checks.append(Check("prices", OK, "bundled price table (no price file configured)"))
    return settings, checks


def _connect(settings: Settings, timeout_s: float):
    """(store or None, checks). The store is opened only after the server answered its ping."""
    from .store import Store, StoreError

    if not settings.embedded:
        url = settings.clickhouse_url.rstrip("/") + "/ping"
        try:
            answer = httpx.get(url, timeout=timeout_s)
            answer.raise_for_status()
        except httpx.HTTPError as exc:
            return None, [Check("connectivity", FAIL, f"ClickHouse at {settings.clickhouse_url} does not answer "
                                f"within {timeout_s:g} s ({type(exc).__name__}: {exc}); is it running, and is "
                                f"INFERWATCH_CLICKHOUSE_URL right?")]
    try:
        store = Store.open(settings)
        version = store.query("SELECT version()").result_rows[0][0]
    except StoreError as exc:
        text = str(exc)
        if "in use by another inferwatch process" in text:
            return None, [Check("connectivity", WARN, f"{text} -- database checks skipped; run the doctor with "
                                "--url against the running collector, or stop it first")]
        return None, [Check("connectivity", FAIL, text)]
    except Exception as exc:  # wrong password, missing grants: the server answered but refused us
        return None, [Check("connectivity", FAIL, f"ClickHouse refused the connection: {type(exc).__name__}: "
                            f"{str(exc).strip()[:300]} (check INFERWATCH_CLICKHOUSE_USER / _PASSWORD)")]
    where = "embedded chDB" if settings.embedded else settings.clickhouse_url
    return store, [Check("connectivity", OK, f"{where} answers (ClickHouse {version})")]


def _schema(store, settings: Settings) -> list[Check]:
    from .migrations import status, target_for

    try:
        rows = status(store)
        target = target_for(settings, store)
    except Exception as exc:
        return [Check("schema", FAIL, f"cannot read the migration state: {type(exc).__name__}: {exc}")]
    problems = []
    advice = {
        "pending": "not applied: run `inferwatch-server migrate`",
        "changed": "applied, but the shipped file differs from what ran (edited migration)",
        "unknown": "recorded in the database but not shipped (the database is newer than this inferwatch)",
        "started": "dirty: a migration stopped half way; fix the cause and rerun `inferwatch-server migrate`",
        "failed": "dirty: failed; fix the cause and rerun `inferwatch-server migrate`",
    }
    for row in rows:
        if row.status in advice:
            problems.append(f"{row.name}: {advice[row.status]}")
        elif row.status == "applied" and row.mode and row.mode != target.mode:
            problems.append(f"{row.name}: applied as {row.mode}, but settings target {target.mode}")
    if problems:
        return [Check("schema", FAIL, "; ".join(problems))]
    latest = max((row.version for row in rows), default=0)
    return [Check("schema", OK, f"{len(rows)} migrations applied ({target.mode}), at version {latest:04d}")]


def _writable(path: Path) -> str | None:
    """Why ``path`` cannot be used as a writable directory, or ``None``. Creates nothing that stays."""
    probe = path
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if not probe.is_dir():
        return f"{probe} is not a directory"
    if not os.access(probe, os.W_OK | os.X_OK):
        return f"{probe} is not writable by this user (uid {os.getuid()})"
    try:
        with tempfile.NamedTemporaryFile(dir=probe, prefix=".inferwatch-doctor-"):
            pass
    except OSError as exc:
        return f"cannot write in {probe}: {exc.strerror or exc}"
    return None


def _directories(settings: Settings) -> list[Check]:
    from .spool import SEGMENT_GLOB, spool_dir_for

    checks = []
    if settings.embedded:
        data_dir = Path(settings.data_dir).expanduser()
        problem = _writable(data_dir)
        checks.append(Check("data_dir", FAIL if problem else OK, problem or f"{data_dir} is writable"))
    if settings.spool_max_bytes <= 0:
        checks.append(Check("spool", WARN, "spooling is off (INFERWATCH_SPOOL_MAX_BYTES=0): a ClickHouse outage "
                            "turns into 503s for every exporter"))
        return checks
    spool_dir = spool_dir_for(settings)
    problem = _writable(spool_dir)
    if problem:
        checks.append(Check("spool", FAIL, problem))
        return checks
    waiting = sorted(spool_dir.glob(SEGMENT_GLOB)) if spool_dir.is_dir() else []
    if waiting:
        size = sum(p.stat().st_size for p in waiting)
        checks.append(Check("spool", WARN, f"{spool_dir} holds {len(waiting)} batch(es), {size} bytes, not yet in "
                            "ClickHouse; a running collector replays them (watch inferwatch_spool_pending_batches)"))
    else:
        checks.append(Check("spool", OK, f"{spool_dir} is writable and empty "
                            f"(limit {settings.spool_max_bytes} bytes)"))
    return checks


def _collector(url: str, timeout_s: float) -> Check:
    try:
        answer = httpx.get(url.rstrip("/") + "/readyz", timeout=timeout_s)
    except httpx.HTTPError as exc:
        return Check("collector", FAIL, f"{url} does not answer within {timeout_s:g} s ({type(exc).__name__})")
    if answer.status_code == 200:
        return Check("collector", OK, f"{url}/readyz: ready")
    try:
        problems = "; ".join(answer.json().get("problems", [])) or answer.text[:200]
    except ValueError:
        problems = answer.text[:200]
    return Check("collector", FAIL, f"{url}/readyz answered {answer.status_code}: {problems}")


def run_checks(make_settings: Callable[[], Settings] = Settings, *, collector_url: str | None = None,
               timeout_s: float = 3.0) -> list[Check]:
    """Every check, in dependency order; nothing is changed (a store is opened and closed again)."""
    settings, checks = _config(make_settings)
    if settings is None:
        checks += [Check(name, SKIP, "needs a valid configuration") for name in ("connectivity", "schema")]
    else:
        store, connected = _connect(settings, timeout_s)
        checks += connected
        if store is None:
            checks.append(Check("schema", SKIP, "needs a database connection"))
        else:
            try:
                checks += _schema(store, settings)
            finally:
                store.close()
        checks += _directories(settings)
    if collector_url:
        checks.append(_collector(collector_url, timeout_s))
    return checks


def failed(checks: list[Check]) -> bool:
    return any(check.status == FAIL for check in checks)


def render(checks: list[Check]) -> str:
    """Human-readable report, one line per check, and a verdict."""
    marks = {OK: "ok  ", WARN: "WARN", FAIL: "FAIL", SKIP: "skip"}
    lines = [f"[{marks[c.status]}] {c.name:13} {c.detail}" for c in checks]
    bad = [c.name for c in checks if c.status == FAIL]
    lines.append(f"\n{len(bad)} problem(s): {', '.join(bad)}" if bad else "\nno problems found")
    return "\n".join(lines)
