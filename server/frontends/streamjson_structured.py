"""Structured output (`--json-schema`, `outputFormat` / `jsonSchema`): the model is told to end
with one JSON value satisfying the schema; the door checks the final answer, asks again when it
does not, and puts the value on the `result` frame as `structured_output`."""

from __future__ import annotations

import json
import re
from typing import Any

MAX_RETRIES = 3
FENCE = re.compile(r"^```(?:json)?\s*\n(.*)\n```\s*$", re.S)


def instruction(schema: dict[str, Any]) -> str:
    return (
        "Your final answer must be only one JSON value (no prose, no code fence) that satisfies "
        f"this JSON Schema:\n{json.dumps(schema, ensure_ascii=False)}"
    )


def retry_prompt(problem: str) -> str:
    return (
        f"Your last answer is not a JSON value satisfying the required schema: {problem}. "
        "Reply with only that JSON value."
    )


def schema_problem(schema: Any) -> str | None:
    """Why `schema` cannot be used, or None."""
    from jsonschema import exceptions, validators

    if not isinstance(schema, dict):
        return "the JSON schema must be an object"
    try:
        validators.validator_for(schema).check_schema(schema)
    except exceptions.SchemaError as exc:
        return f"the JSON schema is invalid: {exc.message}"
    return None


def checked(text: str, schema: dict[str, Any]) -> tuple[Any, str | None]:
    """(the value, None) when `text` is a JSON value the schema accepts, else (None, why not)."""
    from jsonschema import validators

    body = text.strip()
    fenced = FENCE.match(body)
    try:
        value = json.loads(fenced.group(1) if fenced else body)
    except json.JSONDecodeError as exc:
        return None, f"not JSON ({exc.msg} at character {exc.pos})"
    errors = sorted(validators.validator_for(schema)(schema).iter_errors(value), key=str)
    if errors:
        where = "/".join(str(p) for p in errors[0].absolute_path) or "the value"
        return None, f"{where}: {errors[0].message}"
    return value, None


def with_structured(result: dict[str, Any], value: Any, problem: str | None) -> dict[str, Any]:
    if problem is None:
        return {**result, "structured_output": value}
    failed = {k: v for k, v in result.items() if k != "result"}
    why = f"the final answer did not satisfy the JSON schema after {MAX_RETRIES} retries: {problem}"
    return {
        **failed,
        "subtype": "error_max_structured_output_retries",
        "is_error": True,
        "terminal_reason": "structured_output_retry_exhausted",
        "errors": [why],
    }
