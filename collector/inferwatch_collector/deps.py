"""FastAPI dependencies: the app's shared objects and the caller's principal, as annotated aliases."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Header, Request

from .auth import AuthError, KeyStore, Principal, parse_authorization, require
from .settings import Settings
from .store import Store
from .writer import BatchWriter


def get_store(request: Request) -> Store:
    return request.app.state.store


def get_settings_dep(request: Request) -> Settings:
    return request.app.state.settings


def get_writer(request: Request) -> BatchWriter:
    return request.app.state.writer


def get_keys(request: Request) -> KeyStore:
    return request.app.state.keys


StoreDep = Annotated[Store, Depends(get_store)]
SettingsDep = Annotated[Settings, Depends(get_settings_dep)]
WriterDep = Annotated[BatchWriter, Depends(get_writer)]
KeysDep = Annotated[KeyStore, Depends(get_keys)]


def authenticate(
    keys: KeysDep,
    authorization: Annotated[str | None, Header()] = None,
    x_inferwatch_api_key: Annotated[str | None, Header()] = None,
) -> Principal:
    """The caller's principal (401 when the key is missing or invalid). Sync: a cache miss queries the DB."""
    return keys.authenticate(parse_authorization(authorization, x_inferwatch_api_key))


def _scoped(scope: str):
    def dependency(principal: Annotated[Principal, Depends(authenticate)]) -> Principal:
        return require(principal, scope)

    dependency.__name__ = f"require_{scope.replace(':', '_')}"
    return dependency


ReadPrincipal = Annotated[Principal, Depends(_scoped("read"))]
AdminPrincipal = Annotated[Principal, Depends(_scoped("admin"))]
PromptsPrincipal = Annotated[Principal, Depends(_scoped("prompts:read"))]

__all__ = [
    "AdminPrincipal",
    "AuthError",
    "KeysDep",
    "PromptsPrincipal",
    "ReadPrincipal",
    "SettingsDep",
    "StoreDep",
    "WriterDep",
    "authenticate",
]
