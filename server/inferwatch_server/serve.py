"""Run the platform's HTTP app under uvicorn until a signal (``collector`` and ``up`` both serve through here).

SIGINT (Ctrl-C) and SIGTERM both mean "stop": the server shuts down gracefully and :func:`serve` returns 0.
uvicorn would re-raise the signal after its shutdown (so that the process dies of it); here the shutdown *is*
the expected outcome, and a traceback or status 130 after a clean stop would read as a failure.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from inferwatch_collector.settings import Settings


def serve(settings: Settings, on_ready: Callable[[Any], None] | None = None,
          before_exit: Callable[[], None] | None = None) -> int:
    """Serve until a signal, then return 0 (1 when the app failed to start); ``on_ready(app)`` once listening
    (``app.state`` holds the open store and the scheduler);
    ``before_exit()`` when the first signal comes, in a thread, before the shutdown begins (the collector still
    serves meanwhile; a second signal does not wait)."""
    import uvicorn

    from .app import create_app

    class Server(uvicorn.Server):
        def handle_exit(self, sig: int, frame: Any) -> None:
            nonlocal before_exit
            first, before_exit = before_exit, None
            if first is None:
                super().handle_exit(sig, frame)
                return

            def then_exit() -> None:
                try:
                    first()
                finally:
                    uvicorn.Server.handle_exit(self, sig, frame)

            threading.Thread(target=then_exit, name="inferwatch-before-exit", daemon=True).start()

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            with super().capture_signals():
                yield
                self._captured_signals.clear()  # handled by shutting down: not raised again on the way out

    app = create_app(settings)
    config = uvicorn.Config(app, host=settings.host, port=settings.port, log_level="info", access_log=False,
                            loop="uvloop", http="httptools", timeout_graceful_shutdown=10,
                            log_config=None)  # our handlers (logging_setup), not uvicorn's
    server = Server(config)
    if on_ready is not None:
        def watch() -> None:
            while not server.started and not server.should_exit:
                time.sleep(0.1)
            if server.started:
                on_ready(app)
        threading.Thread(target=watch, name="inferwatch-on-ready", daemon=True).start()
    server.run()
    if not server.started:  # the app did not start (uvicorn logged why)
        return 1
    print("collector stopped", flush=True)
    return 0
