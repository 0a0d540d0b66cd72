"""Liveness and readiness, on the public port (load balancers and orchestrators probe them there).

Prometheus metrics are not here: they are served by the internal listener (``metrics_listener.py``)."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

router = APIRouter(tags=["health"])


@router.get("/healthz", summary="Liveness: the process is up")
async def healthz() -> dict[str, str]:  # on the event loop: no thread hop, it answers whenever the loop does
    return {"status": "ok"}


@router.get("/readyz", summary="Readiness: the database answers and the writer runs")
async def readyz(request: Request) -> Response:
    state = request.app.state
    problems = []
    if not state.writer.alive:
        problems.append("writer thread is not running")
    try:
        await run_in_threadpool(state.store.query, "SELECT 1")
    except Exception as exc:
        problems.append(f"database unavailable: {type(exc).__name__}")
    if problems:
        return JSONResponse({"status": "unavailable", "problems": problems}, status_code=503)
    return JSONResponse({"status": "ready"})
