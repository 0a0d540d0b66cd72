"""``POST /api/v1/forget`` (``admin`` scope): remove one user's prompt logs and feedback text from the caller's
project (see :mod:`inferwatch_collector.forget`). The project is always the key's: an admin key of one project
can never make another project forget anything."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from ..deps import AdminPrincipal, SettingsDep, StoreDep
from ..forget import ForgetError, forget
from ..migrations import target_for

router = APIRouter(prefix="/api/v1", tags=["privacy"])


class ForgetIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    user_hash: str = Field(min_length=16, max_length=128, pattern=r"^[0-9a-fA-F]+$",
                           description="The user's hash as the SDK sends it (inferwatch.user.hash), hex")


@router.post(
    "/forget",
    summary="Forget a user: delete their prompt logs and blank their feedback comments/labels (admin)",
    responses={401: {"description": "missing/invalid key"}, 403: {"description": "key lacks admin scope"},
               422: {"description": "user_hash is not a hex hash"},
               503: {"description": "database unavailable; retry (the request is idempotent)"}},
)
async def forget_user(body: ForgetIn, principal: AdminPrincipal, store: StoreDep, settings: SettingsDep
                      ) -> dict[str, Any]:
    def run() -> Any:
        target = None if settings.embedded else target_for(settings, store)  # sharded: mutate the _local tables
        return forget(store, principal.project_id, body.user_hash, target=target)

    try:
        result = await run_in_threadpool(run)
    except ForgetError as exc:
        raise HTTPException(422, str(exc)) from exc
    except Exception as exc:  # the database failed mid-way: every step is idempotent, so a retry finishes it
        raise HTTPException(503, f"could not complete the request ({type(exc).__name__}); retry",
                            headers={"Retry-After": "5"}) from exc
    return result.as_dict()
