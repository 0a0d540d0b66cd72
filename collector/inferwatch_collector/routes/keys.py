"""Key management over HTTP (``admin`` scope, own project only).

In embedded mode the collector owns the database file, so while it runs this API (not the CLI) is how keys
are created and revoked. ``"langfuse": true`` also returns the key as a Langfuse SDK's public/secret key pair and
host (the same key, re-encoded: see :func:`..auth.langfuse_pair`).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Request
from pydantic import BaseModel, Field
from pydantic import field_validator

from ..auth import SCOPES, langfuse_pair, validate_scopes
from ..deps import AdminPrincipal, KeysDep

router = APIRouter(prefix="/api/v1/keys", tags=["keys"])


class KeyCreate(BaseModel):
    scopes: Annotated[list[str], Field(min_length=1, description=f"Any of {', '.join(SCOPES)}")]
    name: Annotated[str, Field(max_length=200)] = ""
    langfuse: Annotated[bool, Field(description="Also return the key as LANGFUSE_PUBLIC_KEY/SECRET_KEY/HOST")] = False

    @field_validator("scopes")
    @classmethod
    def _known(cls, value: list[str]) -> list[str]:
        return list(validate_scopes(value))


@router.post("", status_code=201, summary="Create a key for the caller's project; the key is shown once")
def create_key(body: KeyCreate, principal: AdminPrincipal, keys: KeysDep, request: Request) -> dict[str, Any]:
    key = keys.create_key(principal.project_id, body.scopes, body.name)
    answer: dict[str, Any] = {"key": key, "project": principal.project_id, "scopes": body.scopes}
    if body.langfuse:
        public, secret = langfuse_pair(key)
        answer["langfuse"] = {"LANGFUSE_PUBLIC_KEY": public, "LANGFUSE_SECRET_KEY": secret,
                              "LANGFUSE_HOST": str(request.base_url).rstrip("/")}
    return answer


@router.get("", summary="Keys of the caller's project (never their secrets)")
def list_keys(principal: AdminPrincipal, keys: KeysDep) -> list[dict[str, Any]]:
    return [k.__dict__ for k in keys.list_keys(principal.project_id)]


@router.delete("/{key_id}", summary="Revoke a key of the caller's project")
def revoke_key(key_id: str, principal: AdminPrincipal, keys: KeysDep) -> dict[str, Any]:
    if not keys.revoke(key_id, principal.project_id):
        raise HTTPException(404, f"no key {key_id} in this project")
    return {"revoked": key_id}
