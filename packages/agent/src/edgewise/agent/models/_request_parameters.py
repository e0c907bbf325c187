"""`ModelRequestParameters`: what a model needs to know about a request besides the messages (re-exported by
`models`)."""

from __future__ import annotations as _annotations

import dataclasses
import functools
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal, TypeAlias

from .._messages.instructions import InstructionPart
from .._messages.model_messages import ModelMessage, ModelRequest
from .._tools.definition import ToolDefinition
from .._warnings import PydanticAIDeprecationWarning
from ..native_tools import AbstractNativeTool
from ..output import OutputMode, OutputObjectDefinition
from ..settings import ThinkingLevel

__all__ = (
    'InstructionVisibility',
    'ModelRequestParameters',
    'ToolVisibility',
    'prepare_return_schemas',
    'agent_request_parameters',
    'prompted_output_instructions',
    'request_instructions',
    'resolve_return_schema',
)


ToolVisibility: TypeAlias = Literal['visible', 'deferred', 'withheld', 'via_history']
"""How a request sends a function tool to the provider:

- `'visible'`: among the request's tools, with its schema.
- `'deferred'`: among the request's tools, its schema held back by the provider until a tool search finds it.
- `'withheld'`: not sent at all.
- `'via_history'`: not among the request's tools; its definition goes in the conversation instead.

`ModelRequestParameters.tool_visibility` holds one for each function tool once a model has resolved the request."""

InstructionVisibility: TypeAlias = Literal['prefix', 'via_history']
"""Where an instruction block reaches the model: `'prefix'`, in the instructions at the start of every request, or
`'via_history'`, in the conversation (the instructions of a deferred capability the model loaded)."""


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
    prompted_output_template: str | Literal[False] | None = None
    """The template of the instructions that describe the output schema (prompted output, and native output for
    models whose profile asks for the schema in the instructions); `{schema}` stands for the schema, appended when
    absent. `False`: no such instructions; `None`: none given (the agent fills in the profile's template)."""
    allow_text_output: bool = True
    """Whether plain text is an acceptable final answer."""
    allow_image_output: bool = False
    """Whether an image (a `FilePart` holding a `BinaryImage`) is an acceptable final answer."""
    thinking: ThinkingLevel | None = None
    """The request's reasoning, from the unified `thinking` setting when the model's profile can reason
    (`None`: the model's default). Provider models set it before mapping the request."""
    instruction_parts: list[InstructionPart] | None = None
    """The instruction blocks of this request, as the agent assembled them (their text joined is the last
    `ModelRequest.instructions`, which is what models send): the literal ones, then those of instruction functions
    and toolsets (`dynamic=True`). A request continuing a suspended response has its turn's instructions as one
    block. `None` for a request made outside an agent run (`model.request(...)`), or without instructions."""
    native_tools: list[AbstractNativeTool] = field(default_factory=list)
    """The tools the provider runs itself (web search, code execution, ...), see `edgewise.agent.native_tools`."""
    revealed_tool_names: set[str] = field(default_factory=set)
    """The deferred tools the history has revealed so far (a tool search found them, a `ToolAvailabilityDeltaPart`
    named them, or their deferred capability is loaded); names of tools the run no longer has may be among them."""
    tool_visibility: dict[str, ToolVisibility] | None = None
    """How the request sends each function tool, by name (read it with `visibility_of`). `None` until a model
    resolves the request (`Model.prepare_request`, and every request a model sends): then every function tool has
    an entry, so the dict is empty only without function tools. A hidden tool (`defer_loading=True`, not revealed)
    stays in `function_tools`, `'withheld'` unless its provider holds its schema back (`'deferred'`). Output tools
    have no entry: they are always sent as they are (see `models.resolve_request_tools`)."""
    instruction_visibility: dict[str, InstructionVisibility] | None = None
    """Where the instruction blocks of `instruction_parts` that are not in the instructions' prefix reach the
    model, by block id (as a string); `None` when every block is in the prefix, as it is for every request a model is
    sent (the `before_model_request` hooks also see the blocks of the deferred capabilities the model loaded,
    `'via_history'`: they came in the `load_capability` returns). Read it with `instruction_visibility_of`."""

    @property
    def builtin_tools(self) -> list[AbstractNativeTool]:
        """Deprecated: `native_tools`."""
        warnings.warn(
            '`ModelRequestParameters.builtin_tools` is deprecated, use `ModelRequestParameters.native_tools` instead.',
            PydanticAIDeprecationWarning,
            stacklevel=2,
        )
        return self.native_tools

    @cached_property
    def prompted_output_instructions(self) -> str | None:
        """The output instructions models add to the request's instructions: `prompted_output_template` filled
        with `output_object`'s schema (`None` without a template or a schema)."""
        template, output = self.prompted_output_template, self.output_object
        if not template or output is None:
            return None
        return prompted_output_instructions(template, output)

    @property
    def tool_defs(self) -> dict[str, ToolDefinition]:
        """Function and output tools, by name."""
        return {t.name: t for t in (*self.function_tools, *self.output_tools)}

    @property
    def declared_function_tools(self) -> list[ToolDefinition]:
        """The function tools among the request's tools: those neither `'withheld'` nor `'via_history'`."""
        table = self.tool_visibility or {}  # (`visibility_of` for each, without its lookup of every tool per name)
        return [
            t
            for t in self.function_tools
            if table.get(t.name, 'withheld' if t.defer_loading else 'visible') not in ('withheld', 'via_history')
        ]

    @property
    def declared_tool_defs(self) -> dict[str, ToolDefinition]:
        """The tools among the request's tools, by name: `declared_function_tools`, then every output tool."""
        return {t.name: t for t in (*self.declared_function_tools, *self.output_tools)}

    def visibility_of(self, tool_name: str) -> ToolVisibility:
        """How the request sends the tool named `tool_name`: its `tool_visibility` entry; without one (parameters not
        resolved by a model yet, an output tool, an unknown name), `'withheld'` for a tool marked `defer_loading`
        and `'visible'` for any other name."""
        found = (self.tool_visibility or {}).get(tool_name)
        if found is not None:
            return found
        tool_def = self.tool_defs.get(tool_name)
        return 'withheld' if tool_def is not None and tool_def.defer_loading else 'visible'

    def instruction_visibility_of(self, part: InstructionPart) -> InstructionVisibility:
        """Where the instruction block `part` reaches the model: its `instruction_visibility` entry, else
        `'prefix'` (a block without an id too)."""
        if part.id is not None and (found := (self.instruction_visibility or {}).get(str(part.id))) is not None:
            return found
        return 'prefix'

    def __repr__(self) -> str:
        return (
            f'ModelRequestParameters(function_tools={self.function_tools!r}, output_mode={self.output_mode!r}, '
            f'output_object={self.output_object!r}, output_tools={self.output_tools!r}, '
            f'allow_text_output={self.allow_text_output!r}'
            + (', allow_image_output=True' if self.allow_image_output else '')
            + ('' if (tpl := self.prompted_output_template) is None else f', prompted_output_template={tpl!r}')
            + ('' if self.thinking is None else f', thinking={self.thinking!r}')
            + ('' if self.tool_visibility is None else f', tool_visibility={self.tool_visibility!r}')
            + ')'
        )


def prompted_output_instructions(template: str, output: OutputObjectDefinition) -> str:
    """`template` with `{schema}` replaced by the output's JSON schema, its name as the schema's title and its
    description beside (pydantic-ai's text, so requests read the same; the schema is appended to a template without
    `{schema}`). Other braces in the template are kept as written."""
    schema = dict(output.json_schema)
    if output.name:
        schema['title'] = output.name
    if output.description:
        schema['description'] = output.description
    if '{schema}' not in template:
        template = f'{template}\n\n{{schema}}'
    import json  # (loaded by the first prompted output, not with the agent)

    return template.replace('{schema}', json.dumps(schema))


def request_instructions(messages: Sequence[ModelMessage], params: ModelRequestParameters) -> str | None:
    """The instructions a model sends with a request: the latest request's (earlier requests' instructions are not
    resent), followed by the prompted-output instructions of `params`, if any."""
    instructions: str | None = None
    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            instructions = message.instructions
            break
    if not params.prompted_output_template:  # no output instructions: the common case costs one check
        return instructions
    output_instructions = params.prompted_output_instructions
    if not output_instructions:
        return instructions
    return '\n\n'.join(t for t in (instructions, output_instructions) if t).strip() or None


def _taking_builtin_tools(init: Any) -> Any:
    # `ModelRequestParameters(builtin_tools=...)`, pydantic-ai's spelling before 1.107, still works (and warns).
    @functools.wraps(init)
    def __init__(self: ModelRequestParameters, **kwargs: Any) -> None:
        if 'builtin_tools' in kwargs:
            warnings.warn(
                '`builtin_tools` is deprecated, use `native_tools` instead.', PydanticAIDeprecationWarning, stacklevel=2
            )
            legacy = kwargs.pop('builtin_tools')
            kwargs.setdefault('native_tools', legacy)
        init(self, **kwargs)

    return __init__


ModelRequestParameters.__init__ = _taking_builtin_tools(ModelRequestParameters.__init__)  # type: ignore[method-assign]


def agent_request_parameters(
    *,
    function_tools: list[ToolDefinition],
    output_mode: OutputMode,
    output_object: OutputObjectDefinition | None,
    output_tools: list[ToolDefinition],
    prompted_output_template: str | Literal[False] | None,
    allow_text_output: bool,
    allow_image_output: bool,
    instruction_parts: list[InstructionPart] | None,
) -> ModelRequestParameters:
    """`ModelRequestParameters(...)` with these fields and the others' defaults, without the `__init__` (the
    `builtin_tools` wrapper's keywords, then the dataclass's): the parameters an agent run builds for each request.
    The instance's `__dict__` holds every field, in the order of the fields, as the `__init__` leaves it."""
    params: ModelRequestParameters = _new(ModelRequestParameters)
    params.__dict__ = {
        'function_tools': function_tools,
        'output_mode': output_mode,
        'output_object': output_object,
        'output_tools': output_tools,
        'prompted_output_template': prompted_output_template,
        'allow_text_output': allow_text_output,
        'allow_image_output': allow_image_output,
        'thinking': None,
        'instruction_parts': instruction_parts,
        'native_tools': [],
        'revealed_tool_names': set(),
        'tool_visibility': None,
        'instruction_visibility': None,
    }
    return params


_new = object.__new__


def resolve_return_schema(tool_def: ToolDefinition, *, native: bool = False) -> ToolDefinition:
    """The definition as the model gets it. A tool that asks for its return schema (`include_return_schema`) keeps
    it for a model that takes return schemas (`native`), and has it added to its description for the others; the
    schema of a tool that does not ask is dropped.
    """
    if not tool_def.include_return_schema:
        if tool_def.return_schema is None:
            return tool_def
        return dataclasses.replace(tool_def, return_schema=None)
    if not tool_def.return_schema:
        warnings.warn(
            f'Tool {tool_def.name!r} has `include_return_schema` enabled but no meaningful return schema was '
            'generated. Set `include_return_schema=False` on this tool to suppress this warning.',
            UserWarning,
            stacklevel=2,
        )
        return dataclasses.replace(tool_def, return_schema=None)
    if native:
        return tool_def
    import json  # (loaded by the first return schema described, not with the agent)

    parts = [tool_def.description] if tool_def.description else []
    parts += ['Return schema:', json.dumps(tool_def.return_schema, indent=2)]
    return dataclasses.replace(tool_def, description='\n\n'.join(parts), return_schema=None)


def prepare_return_schemas(
    params: ModelRequestParameters, *, supports_tool_return_schema: bool
) -> ModelRequestParameters:
    """The parameters with each function tool's return schema resolved (`resolve_return_schema`) for a model that
    takes return schemas (`supports_tool_return_schema`, its profile says) or not; `params` itself when none
    changes."""
    tools = [resolve_return_schema(d, native=supports_tool_return_schema) for d in params.function_tools]
    if all(new is old for new, old in zip(tools, params.function_tools, strict=True)):
        return params
    return dataclasses.replace(params, function_tools=tools)
