"""`ToolDefinition`: what a model is told about a tool (re-exported by `tools`).

Plain data below the models and the tools, since both use it: a model receives definitions in its request
parameters, a `Tool` makes its own.
"""

from __future__ import annotations as _annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

__all__ = ('ToolDefinition', 'ToolKind')


ToolKind: TypeAlias = Literal['function', 'output', 'external', 'unapproved']
"""What a tool definition is for: a function tool, an output tool, or a tool run outside the agent."""


@dataclass(repr=False, kw_only=True)
class ToolDefinition:
    """What a model is told about a tool: its name, description and argument schema."""

    name: str
    """The tool's name, unique within a run."""
    parameters_json_schema: dict[str, Any] = field(
        default_factory=lambda: {'type': 'object', 'properties': {}, 'additionalProperties': False}
    )
    """The JSON schema of the tool's arguments."""
    description: str | None = None
    """What the tool does, for the model."""
    outer_typed_dict_key: str | None = None
    """For output tools wrapping a non-object type: the key the value is wrapped under (`'response'`)."""
    strict: bool | None = None
    """Whether the model should follow the schema strictly (for providers that support it)."""
    sequential: bool = False
    """Whether calls of this tool must not run concurrently with other tool calls."""
    kind: ToolKind = 'function'
    """What the tool is for."""
    metadata: dict[str, Any] | None = None
    """Data for the application; not sent to the model."""

    def __repr__(self) -> str:
        shown = [f'name={self.name!r}', f'parameters_json_schema={self.parameters_json_schema!r}']
        if self.description is not None:
            shown.append(f'description={self.description!r}')
        for name in ('outer_typed_dict_key', 'strict', 'metadata'):
            if (value := getattr(self, name)) is not None:
                shown.append(f'{name}={value!r}')
        if self.sequential:
            shown.append('sequential=True')
        if self.kind != 'function':
            shown.append(f'kind={self.kind!r}')
        return f'ToolDefinition({", ".join(shown)})'

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ToolDefinition):
            return NotImplemented
        return dataclasses.astuple(self) == dataclasses.astuple(other)

    __hash__ = None  # type: ignore[assignment]
