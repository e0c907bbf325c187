"""The base of the Vercel AI wire models: camelCase on the wire, snake_case in Python, unknown fields refused."""

from __future__ import annotations as _annotations

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

__all__ = ('CamelBaseModel',)


class CamelBaseModel(BaseModel):
    """A model read from and written to camelCase JSON."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra='forbid')
