"""The app's routes as a test walks them: every (method, path) with its dependencies and OpenAPI operation, and
request URLs with plausible values for their required parameters."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from fastapi import FastAPI

# --- the route walk ----------------------------------------------------------------------------------------------
# /metrics is not among them: it is on the internal listener only (test_metrics_listener.py); the docs routes
# exist only with api_docs on.
PUBLIC = {("GET", "/healthz"), ("GET", "/readyz"), ("GET", "/openapi.json"),
          ("GET", "/docs"), ("GET", "/docs/oauth2-redirect"), ("GET", "/redoc")}


@dataclass
class Route:
    method: str
    path: str
    dependant: Any | None
    operation: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str]:
        return self.method, self.path


def _route_objects(app: FastAPI) -> Iterator[Any]:
    for route in app.routes:
        contexts = getattr(route, "effective_route_contexts", None)  # FastAPI's lazily included routers
        if contexts is not None:
            yield from contexts()
        else:
            yield route


def app_routes(app: FastAPI) -> list[Route]:
    """Every (method, path) the app serves, with its dependencies and OpenAPI operation (when in the spec)."""
    spec = app.openapi()["paths"]
    routes = []
    for obj in _route_objects(app):
        path = getattr(obj, "path", None)
        for method in sorted(getattr(obj, "methods", None) or ()):
            if method == "HEAD" or path is None:
                continue
            operation = spec.get(path, {}).get(method.lower(), {})
            routes.append(Route(method, path, getattr(obj, "dependant", None), operation))
    return routes


def _schema_value(schema: dict[str, Any], name: str) -> Any:
    """A plausible value for a parameter from its JSON schema."""
    if "anyOf" in schema:
        schema = next((s for s in schema["anyOf"] if s.get("type") != "null"), {})
    if "default" in schema and schema["default"] is not None:
        return schema["default"]
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "integer":
        return schema.get("minimum", 1)
    if kind == "number":
        return max(1.0, float(schema.get("minimum", 1.0)))
    if kind == "boolean":
        return False
    if schema.get("format") == "date-time":
        return datetime.now(UTC).isoformat()
    if schema.get("format") == "date":
        return datetime.now(UTC).date().isoformat()
    if name == "model":
        return "llama-3-70b"
    return "x"


def build_url(route: Route, path_values: dict[str, str], query: dict[str, Any] | None = None
              ) -> tuple[str, dict[str, Any]]:
    path = route.path
    for name, value in path_values.items():
        path = path.replace("{" + name + "}", quote(str(value), safe=""))
    params = {}
    for param in route.operation.get("parameters", []):
        if param["in"] == "query" and param.get("required"):
            params[param["name"]] = _schema_value(param.get("schema", {}), param["name"])
    params.update(query or {})
    return path, params


def path_params(route: Route) -> list[str]:
    names = [p["name"] for p in route.operation.get("parameters", []) if p["in"] == "path"]
    if not names:  # not in the spec: read them from the template
        names = re.findall(r"\{(\w+)(?::\w+)?\}", route.path)
    return names


# --- fixtures ----------------------------------------------------------------------------------------------------
def header(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}
