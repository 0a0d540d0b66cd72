"""``POST /api/v1/forget`` (``admin`` scope): forget one user in the caller's project (see
:mod:`inferwatch_collector.forget`). The project is always the key's: an admin key of one project can never make
another project forget anything.

The user is named by ``user_hash`` (the hex hash the SDK sends) or by ``user_id`` (the raw id), which is hashed
here with the deployment's user-hash key (``app.state.user_hasher``, the same HMAC as the SDK's
``inferwatch.context.hash_user_id`` when both share ``INFERWATCH_USER_HASH_KEY``) and then dropped: the raw id is
never logged, stored or echoed (the answer names the hash only).
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, HTTPException, Request
from pydantic import BaseModel, ConfigDict, Field, model_validator
from starlette.concurrency import run_in_threadpool

from ..deps import AdminPrincipal, SettingsDep, StoreDep
from ..forget import ForgetError, forget
from ..migrations import target_for

router = APIRouter(prefix="/api/v1", tags=["privacy"])


class ForgetIn(BaseModel):
    model_config = ConfigDict(extra="forbid", hide_input_in_errors=True)

    user_hash: str | None = Field(None, min_length=16, max_length=128, pattern=r"^[0-9a-fA-F]+$",
                                  description="The user's hash as the SDK sends it (inferwatch.user.hash), hex")
    user_id: str | None = Field(None, min_length=1, max_length=1024, repr=False,
                                description="The raw user id instead of user_hash: hashed with the deployment's "
                                "user-hash key, never stored or logged")

    @model_validator(mode="after")
    def _one_user(self) -> ForgetIn:
        if (self.user_hash is None) == (self.user_id is None):
            raise ValueError("send exactly one of user_hash and user_id")
        return self


@router.post(
    "/forget",
    summary="Forget a user: delete their prompt logs, scrub their spans and calls, blank their feedback (admin)",
    responses={401: {"description": "missing/invalid key"}, 403: {"description": "key lacks admin scope"},
               422: {"description": "user_hash is not a hex hash, or neither or both of user_hash and user_id"},
               503: {"description": "database unavailable; retry (the request is idempotent)"}},
)
async def forget_user(body: ForgetIn, request: Request, principal: AdminPrincipal, store: StoreDep,
                      settings: SettingsDep) -> dict[str, Any]:
    # The collector's hasher (user_ids.UserHasher, built at start-up): the value ingest stores for enduser.id & co.
    user_hash = body.user_hash if body.user_id is None else request.app.state.user_hasher.hash(body.user_id)

    def run() -> Any:
        target = None if settings.embedded else target_for(settings, store)  # sharded: mutate the _local tables
        return forget(store, principal.project_id, user_hash or "", target=target)

    try:
        result = await run_in_threadpool(run)
    except ForgetError as exc:
        raise HTTPException(422, str(exc)) from exc
    except Exception as exc:  # the database failed mid-way: every step is idempotent, so a retry finishes it
        raise HTTPException(503, f"could not complete the request ({type(exc).__name__}); retry",
                            headers={"Retry-After": "5"}) from exc
    return result.as_dict()
