"""The docstrings written under wire models' fields, read from the source for the schema and
the docs. The models do not carry them at runtime: nothing there reads them, and pydantic would
read every module's source at import to find them."""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Mapping
from functools import cache
from itertools import pairwise

from pydantic import BaseModel


def field_docs(model: type[BaseModel]) -> dict[str, str]:
    """Field name -> its docstring, for `model` and the models it inherits from."""
    docs: dict[str, str] = {}
    for klass in reversed(model.__mro__):
        if isinstance(klass, type) and issubclass(klass, BaseModel) and klass is not BaseModel:
            docs.update(_own_docs(klass))
    return docs


@cache
def _own_docs(klass: type) -> dict[str, str]:
    try:
        source = textwrap.dedent(inspect.getsource(klass))
    except (OSError, TypeError):
        return {}
    body = ast.parse(source).body[0]
    if not isinstance(body, ast.ClassDef):
        return {}
    docs = {}
    for node, after in pairwise(body.body):
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            docs[node.target.id] = inspect.cleandoc(after.value.value)
    return docs


def describe(schema: dict, models: Mapping[str, type[BaseModel]]) -> dict:
    """Put the field docstrings into a JSON Schema's `$defs` (properties named by alias), where
    pydantic left no description."""
    for name, definition in schema.get("$defs", {}).items():
        model = models.get(name)
        if model is None:
            continue
        docs = field_docs(model)
        properties = definition.get("properties", {})
        for field_name, field in model.model_fields.items():
            prop = properties.get(field.alias or field_name)
            doc = docs.get(field_name)
            if prop is not None and doc and "description" not in prop:
                prop["description"] = doc
    return schema
