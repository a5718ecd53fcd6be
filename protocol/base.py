"""Base class for every wire model: camelCase on the wire, snake_case in Python."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class WireModel(BaseModel):
    """A JSON-RPC payload. Unknown fields are ignored so newer clients keep working."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="ignore",
    )
    # Field docstrings are the schema's descriptions; `protocol.field_docs` reads them for the
    # schema and the docs, so importing the models does not read every module's source.

    def to_wire(self) -> dict:
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)
