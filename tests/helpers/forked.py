"""Run a piece of a test in a forked child of the test process (fork-safety tests)."""

from __future__ import annotations

import json
import os
import select
from collections.abc import Callable
from typing import Any

import pytest


def in_child(work: Callable[[], Any], timeout_s: float = 30.0) -> Any:
    """``work()`` run in a forked child, its (JSON-able) result read back through a pipe. The child never returns
    into pytest; one that raises fails the test with its error, one that does not answer in ``timeout_s`` (a
    lock the parent held at the fork) is killed and fails it too."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        try:
            os.close(read_fd)
            try:
                answer: Any = {"result": work()}
            except BaseException as exc:  # noqa: BLE001 - reported to the parent
                answer = {"error": repr(exc)}
            os.write(write_fd, json.dumps(answer).encode())
        finally:
            os._exit(0)
    os.close(write_fd)
    try:
        poller = select.poll()  # not select.select: the full suite may hold more than 1024 descriptors
        poller.register(read_fd, select.POLLIN)
        if not poller.poll(int(timeout_s * 1000)):
            os.kill(pid, 9)
            pytest.fail("the forked child deadlocked")
        chunks = []
        while chunk := os.read(read_fd, 1 << 16):
            chunks.append(chunk)
        answer = json.loads(b"".join(chunks).decode())
    finally:
        os.close(read_fd)
        os.waitpid(pid, 0)
    if "error" in answer:
        pytest.fail(f"the forked child raised {answer['error']}")
    return answer["result"]
