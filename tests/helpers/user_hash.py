"""A user-id hasher for tests: what ``app.state.user_hasher`` is (``hash(user_id) -> lower-case hex``).

The collector's own (``inferwatch_collector.user_ids.UserHasher``, keyed by ``INFERWATCH_USER_HASH_KEY``) is the
same HMAC-SHA256 as the SDK's ``inferwatch.context.hash_user_id``; tests that run before it is wired install this.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Any

TEST_KEY = b"inferwatch-test-user-hash-key-32"


class TestHasher:
    """HMAC-SHA256 of a user id with ``key``, as lower-case hex."""

    __test__ = False  # not a pytest test class

    def __init__(self, key: bytes = TEST_KEY) -> None:
        self.key = key

    def hash(self, user_id: str) -> str:
        return hmac.new(self.key, str(user_id).encode(), hashlib.sha256).hexdigest()


def user_hasher(app: Any) -> Any:
    """The app's user hasher; installs a :class:`TestHasher` where the app has none yet."""
    hasher = getattr(app.state, "user_hasher", None)
    if hasher is None:
        hasher = app.state.user_hasher = TestHasher()
    return hasher
