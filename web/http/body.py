"""Reading a JSON request body safely: content type, syntax, depth, strings.

Routes that take alert payloads read the body here rather than through FastAPI's body parameter, so
the wrong content type is a 415, and strings a database cannot store (NUL, lone surrogates) are
refused up front instead of failing at commit. The size is not counted here: the body gate
(``web.http.gate``) caps every route's body while it streams in, before any handler reads it.
"""

import json
import math
import re
from typing import Annotated, Any

from fastapi import Request
from pydantic import AfterValidator, BaseModel

MAX_DEPTH = 32
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


class BodyError(Exception):
    """A body that cannot be taken; ``status`` is the HTTP code, ``detail`` names the problem."""

    def __init__(self, status: int, detail: str, errors: list[str] | None = None) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.errors = errors or [detail]


def storable(value: str) -> str:
    """For a text field of a request model: NUL and unpaired surrogates mean nothing in alert text or
    notes, PostgreSQL refuses both, and JSON cannot answer them back, so they are a 422 naming it."""
    if _UNSTORABLE.search(value):
        raise ValueError("must not contain NUL characters or unpaired surrogates")
    return value


StorableText = Annotated[str, AfterValidator(storable)]


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _finite(text: str) -> float:
    """A JSON number as a float, refusing one too large for it (``1e400``), which would be stored as
    the ``Infinity`` that ``_no_constants`` refuses when it is written out."""
    value = float(text)
    if math.isinf(value):
        raise ValueError(f"{text} is too large a number")
    return value


async def read_json(request: Request) -> Any:
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if media != "application/json" and not media.endswith("+json"):
        raise BodyError(415, f"send Content-Type: application/json (got {media or 'none'})")
    data = await request.body()
    if not data.strip():
        raise BodyError(400, "empty body: expected a JSON object")
    try:
        value = json.loads(data.decode("utf-8"), parse_constant=_no_constants, parse_float=_finite)
    except UnicodeDecodeError as exc:
        raise BodyError(400, "body is not UTF-8 encoded JSON") from exc
    except json.JSONDecodeError as exc:
        raise BodyError(
            400, f"body is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from exc
    except RecursionError as exc:
        raise BodyError(400, "body is not valid JSON: nested too deeply") from exc
    except ValueError as exc:
        raise BodyError(400, f"body is not valid JSON: {exc}") from exc
    _check_storable(value)
    return value


def _check_storable(value: Any) -> None:
    """Walk the document once, without recursion: bounded depth, no NUL, no lone surrogates."""
    stack: list[tuple[Any, str, int]] = [(value, "body", 0)]
    while stack:
        item, path, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise BodyError(422, f"{path}: nested deeper than {MAX_DEPTH} levels")
        if isinstance(item, str):
            if _UNSTORABLE.search(item):
                raise BodyError(422, f"{path}: contains a NUL character or an unpaired surrogate")
        elif isinstance(item, dict):
            for key, child in item.items():
                if _UNSTORABLE.search(key):
                    raise BodyError(422, f"{path}: a key contains a NUL character or an unpaired surrogate")
                stack.append((child, f"{path}.{key}", depth + 1))
        elif isinstance(item, list):
            stack.extend((child, f"{path}[{i}]", depth + 1) for i, child in enumerate(item))


def request_body_schema(model: type[BaseModel]) -> dict[str, Any]:
    """An ``openapi_extra`` documenting ``model`` as the JSON body of a route that reads it itself."""
    schema = model.model_json_schema()
    definitions = schema.pop("$defs", {})

    def inline(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                return inline(definitions[ref.removeprefix("#/$defs/")])
            return {key: inline(child) for key, child in node.items()}
        if isinstance(node, list):
            return [inline(child) for child in node]
        return node

    return {"requestBody": {"required": True, "content": {"application/json": {"schema": inline(schema)}}}}
