"""`ModelRequestParameters`: what a model needs to know about a request besides the messages (re-exported by
`models`)."""

from __future__ import annotations as _annotations

from dataclasses import dataclass, field

from .._tool_definition import ToolDefinition
from ..output import OutputMode, OutputObjectDefinition
from ..settings import ThinkingLevel

__all__ = ('ModelRequestParameters',)


@dataclass(repr=False, kw_only=True)
class ModelRequestParameters:
    """What a model needs to know about a request besides the messages: tools and the kind of output."""

    function_tools: list[ToolDefinition] = field(default_factory=list)
    """The function tools the model may call."""
    output_mode: OutputMode = 'text'
    """How the output is asked for."""
    output_object: OutputObjectDefinition | None = None
    """The output schema, for native and prompted output."""
    output_tools: list[ToolDefinition] = field(default_factory=list)
    """The output tools the model may call to give its final answer."""
    allow_text_output: bool = True
    """Whether plain text is an acceptable final answer."""
    thinking: ThinkingLevel | None = None
    """The request's reasoning, from the unified `thinking` setting when the model's profile can reason
    (`None`: the model's default). Provider models set it before mapping the request."""
    instruction_parts: list[str] | None = None
    """Instructions assembled for this request (also on the last `ModelRequest.instructions`)."""

    @property
    def tool_defs(self) -> dict[str, ToolDefinition]:
        """Function and output tools, by name."""
        return {t.name: t for t in (*self.function_tools, *self.output_tools)}

    def __repr__(self) -> str:
        return (
            f'ModelRequestParameters(function_tools={self.function_tools!r}, output_mode={self.output_mode!r}, '
            f'output_object={self.output_object!r}, output_tools={self.output_tools!r}, '
            f'allow_text_output={self.allow_text_output!r}'
            + ('' if self.thinking is None else f', thinking={self.thinking!r}')
            + ')'
        )
