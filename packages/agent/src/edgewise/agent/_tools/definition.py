"""`ToolDefinition`: what a model is told about a tool (re-exported by `tools`).

Plain data below the models and the tools, since both use it: a model receives definitions in its request
parameters, a `Tool` makes its own.
"""

from __future__ import annotations as _annotations

import dataclasses
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

if TYPE_CHECKING:
    from ..function_signature import FunctionSignature

__all__ = ('ToolDefinition', 'ToolDefinitionKind')


ToolDefinitionKind: TypeAlias = Literal['function', 'output', 'external', 'unapproved']
"""What a tool definition is for: a function tool, an output tool, or a tool run outside the agent (pydantic-ai 1.x's
`tools.ToolKind`; that name is now `messages.ToolKind`, what a tool is)."""


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
    kind: ToolDefinitionKind = 'function'
    """What the tool is for."""
    metadata: dict[str, Any] | None = None
    """Data for the application; not sent to the model."""
    timeout: float | None = None
    """Seconds a call may run before it is abandoned and the model asked to retry; no limit if `None`."""
    defer_loading: bool = False
    """Whether the tool is hidden from the model until a tool search surfaces it (as in pydantic-ai)."""
    unless_native: str | None = None
    """A native tool whose support by the model drops this tool from the request (pydantic-ai field)."""
    with_native: str | None = None
    """A native tool whose support keeps this tool in the request in that tool's format (pydantic-ai field)."""
    tool_kind: str | None = None
    """The typed call/return shape of framework tools (`'tool-search'`); `None` for function tools."""
    return_schema: dict[str, Any] | None = None
    """The JSON schema of what the tool returns; sent (in the description) only with `include_return_schema`."""
    include_return_schema: bool | None = None
    """Whether the model is told the return schema; not when `None` or `False`."""
    toolset_id: str | None = None
    """The `id` of the toolset the tool comes from, when it has one: set as the run collects the tools of its
    toolsets (`CombinedToolset`), for capabilities that treat tools by toolset."""
    capability_id: str | None = None
    """The capability that contributed the tool, if any."""

    @cached_property
    def function_signature(self) -> FunctionSignature:
        """The tool as a Python function signature, read from `parameters_json_schema` and `return_schema` on first
        use (and kept). It holds no description: `render_signature` gives the tool's."""
        from ..function_signature import FunctionSignature  # on first use: importing it costs ~10 ms

        return FunctionSignature.from_schema(
            name=self.name, parameters_schema=self.parameters_json_schema, return_schema=self.return_schema
        )

    def render_signature(self, body: str, **kwargs: Any) -> str:
        """The tool as Python source: `function_signature.render(body, ...)` under the tool's name and
        description (the other options of `FunctionSignature.render` are passed on)."""
        return self.function_signature.render(body, name=self.name, description=self.description, **kwargs)

    @property
    def defer(self) -> bool:
        """Whether calls of the tool are answered outside the run (external tools and tools awaiting approval)."""
        return self.kind in ('external', 'unapproved')

    def __repr__(self) -> str:
        # the fields that differ from their defaults, as pydantic-ai shows them
        shown = [f'name={self.name!r}', f'parameters_json_schema={self.parameters_json_schema!r}']
        for item in dataclasses.fields(self)[2:]:
            value = getattr(self, item.name)
            if value != item.default:
                shown.append(f'{item.name}={value!r}')
        return f'ToolDefinition({", ".join(shown)})'

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ToolDefinition):
            return NotImplemented
        return dataclasses.astuple(self) == dataclasses.astuple(other)

    __hash__ = None  # type: ignore[assignment]
