"""The base of the native tools, `AbstractNativeTool`, and the registry of their classes by `kind`; in a module of its
own so that the modules defining tools (`_tool_search`) import it without importing the package."""

from __future__ import annotations as _annotations

from abc import ABC
from dataclasses import dataclass
from typing import Annotated, Any, Union

import pydantic
from pydantic_core import core_schema

__all__ = ('NATIVE_TOOL_TYPES', 'AbstractNativeTool')

NATIVE_TOOL_TYPES: dict[str, type[AbstractNativeTool]] = {}
"""Every native tool class by its `kind` (filled in as the classes are defined, subclasses of users too)."""


@dataclass(kw_only=True)
class AbstractNativeTool(ABC):  # noqa: B024 (abstract: only its subclasses are tools)
    """Base of the tools a provider runs itself; passed to models in `ModelRequestParameters.native_tools`.

    Validating data as `AbstractNativeTool` picks the subclass registered under the data's `kind`.
    """

    kind: str = 'unknown_native_tool'
    """What tool this is: the tag of serialized native tools."""

    optional: bool = False
    """When `True`, a model that cannot run this tool leaves it out of the request instead of raising
    `UserError` (for tools that only improve on something the agent can do without them)."""

    @property
    def unique_id(self) -> str:
        """What tells two tools of a request apart: its `kind`, unless several of one kind can be sent."""
        return self.kind

    @property
    def label(self) -> str:
        """A name for user interfaces (`'Web Search'`)."""
        return self.kind.replace('_', ' ').title()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        NATIVE_TOOL_TYPES[cls.kind] = cls

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source_type: Any, handler: pydantic.GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        if cls is not AbstractNativeTool:
            return handler(cls)
        tagged = tuple(Annotated[tool, pydantic.Tag(kind)] for kind, tool in NATIVE_TOOL_TYPES.items())
        union: Any = Annotated[Union[tagged], pydantic.Discriminator(_kind_of)]  # noqa: UP007
        return handler(union)


def _kind_of(value: Any) -> str:
    if isinstance(value, dict):
        return str(value.get('kind', AbstractNativeTool.kind))  # pyright: ignore[reportUnknownMemberType]
    return str(getattr(value, 'kind', AbstractNativeTool.kind))
