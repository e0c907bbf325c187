"""Output specs: how a run's output is asked of the model (a tool call, native structured output, a prompt,
or plain text) and turned into a typed value.

Give `Agent(output_type=...)` a type (`str`, a pydantic model, a dataclass, a TypedDict, a scalar, a union
or list of them), a function (its arguments become the schema; its return value is the output), or one of
the markers below.
"""

from __future__ import annotations as _annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeAlias

from typing_extensions import TypeVar

__all__ = (
    'OutputDataT',
    'OutputMode',
    'OutputSpec',
    'ToolOutput',
    'NativeOutput',
    'PromptedOutput',
    'TextOutput',
    'OutputObjectDefinition',
    'DEFAULT_OUTPUT_TOOL_NAME',
    'DEFAULT_OUTPUT_TOOL_DESCRIPTION',
)

OutputDataT = TypeVar('OutputDataT', default=str, covariant=True)
"""Type of a run's output."""
T_co = TypeVar('T_co', covariant=True)

DEFAULT_OUTPUT_TOOL_NAME = 'final_result'
"""The name of the output tool (`final_result_<Name>` for each member of a union)."""
DEFAULT_OUTPUT_TOOL_DESCRIPTION = 'The final response which ends this conversation'
"""The description of an output tool whose type has no docstring."""

OutputMode: TypeAlias = Literal['text', 'tool', 'native', 'prompted', 'tool_or_text']
"""How the output is asked of the model."""


@dataclass(init=False)
class ToolOutput(Generic[T_co]):
    """Ask for the output as a call of an output tool (the default for structured types)."""

    output: Any
    """The output type, or a function whose return value is the output."""
    name: str | None
    """The output tool's name; `final_result` (or `final_result_<Name>`) if `None`."""
    description: str | None
    """The output tool's description; the type's docstring if `None`."""
    max_retries: int | None
    """Accepted for compatibility; output retries are counted by the agent's `output_retries`."""
    strict: bool | None
    """Whether the model should follow the schema strictly."""

    def __init__(
        self,
        type_: type[T_co] | Callable[..., T_co] | Callable[..., Awaitable[T_co]],
        *,
        name: str | None = None,
        description: str | None = None,
        max_retries: int | None = None,
        strict: bool | None = None,
    ) -> None:
        self.output = type_
        self.name = name
        self.description = description
        self.max_retries = max_retries
        self.strict = strict


@dataclass(init=False)
class NativeOutput(Generic[T_co]):
    """Ask for the output with the model's native structured output (a JSON response matching a schema)."""

    outputs: Any
    """The output type or types."""
    name: str | None
    """The name of the schema sent to the model."""
    description: str | None
    """The description of the schema sent to the model."""
    strict: bool | None
    """Whether the model should follow the schema strictly."""

    def __init__(
        self,
        outputs: type[T_co] | Sequence[type[T_co]],
        *,
        name: str | None = None,
        description: str | None = None,
        strict: bool | None = None,
    ) -> None:
        self.outputs = outputs
        self.name = name
        self.description = description
        self.strict = strict


@dataclass(init=False)
class PromptedOutput(Generic[T_co]):
    """Ask for the output as JSON text, by adding the schema to the instructions; works with any model."""

    outputs: Any
    """The output type or types."""
    name: str | None
    """The name of the schema."""
    description: str | None
    """The description of the schema."""
    template: str | None
    """The instructions text, with `{schema}` where the JSON schema goes; a built-in text if `None`."""

    def __init__(
        self,
        outputs: type[T_co] | Sequence[type[T_co]],
        *,
        name: str | None = None,
        description: str | None = None,
        template: str | None = None,
    ) -> None:
        self.outputs = outputs
        self.name = name
        self.description = description
        self.template = template


@dataclass
class TextOutput(Generic[T_co]):
    """Take the model's plain text answer and turn it into the output with `output_function`."""

    output_function: Callable[..., T_co] | Callable[..., Awaitable[T_co]]
    """Called with the text (after the `RunContext` if its first parameter is one); returns the output."""


@dataclass(kw_only=True)
class OutputObjectDefinition:
    """The schema of a structured output sent to models for native or prompted output."""

    json_schema: dict[str, Any]
    """The JSON schema of the output."""
    name: str | None = None
    """The schema's name."""
    description: str | None = None
    """The schema's description."""
    strict: bool | None = None
    """Whether the model should follow the schema strictly."""


_OutputItem: TypeAlias = (
    type[T_co] | ToolOutput[T_co] | TextOutput[T_co] | Callable[..., T_co] | Callable[..., Awaitable[T_co]]
)
OutputSpec: TypeAlias = _OutputItem[T_co] | NativeOutput[T_co] | PromptedOutput[T_co] | Sequence[_OutputItem[T_co]]
"""Anything `Agent(output_type=...)` accepts: a type, a function, a marker, or a sequence of them."""
