"""Stopping a server started in a session of its own (``subprocess.Popen(..., start_new_session=True)``)."""

from __future__ import annotations

import os
import signal
import subprocess


def interrupt_group(proc: subprocess.Popen, wait_s: float = 30) -> None:
    """Stop ``proc`` as Ctrl-C in its terminal would: SIGINT to its whole process group, then SIGKILL to the group
    when it has not exited within ``wait_s`` (so a hung shutdown never outlives the test). Nothing when it has
    exited already."""
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGINT)
    try:
        proc.wait(wait_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
