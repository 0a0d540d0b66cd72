"""A real store seen through a window: every query is counted (by the table it reads) and can be made to fail.

For the key checks: how many database lookups a flood of keys costs, and what a collector does when its queries
fail (the database unreachable from it) while another collector on the same store still works.
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

from inferwatch_collector.store import Store


class WatchedStore:
    """Delegates to ``store``; ``queries[table]`` counts queries naming ``FROM <table>``; while ``down``, every
    query raises ``ConnectionRefusedError``."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self.down = False
        self.queries: Counter[str] = Counter()
        self._lock = threading.Lock()

    def query(self, sql: str, parameters: dict[str, Any] | None = None, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            for table in ("api_keys", "projects"):
                if f"FROM {table}" in sql:
                    self.queries[table] += 1
        if self.down:
            raise ConnectionRefusedError("[Errno 111] Connection refused")
        return self._store.query(sql, parameters, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)
