"""The output schema of an agent: which output tools the model gets, whether text is allowed, and how the
model's answer is validated into the output value."""

from __future__ import annotations as _annotations

import dataclasses
import inspect
import re
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property
from typing import Any, Generic, Literal, Union, get_args, get_origin

import pydantic
import pydantic_core
from typing_extensions import TypeVar, is_typeddict

from .._functions.schema import FunctionSchema, GenerateOutputJsonSchema, function_schema, takes_run_context
from .._threads import run_in_thread
from .._tools.deferred_calls import DeferredToolRequests
from ..exceptions import UserError
from ..messages import BinaryImage
from ..output import (
    DEFAULT_OUTPUT_TOOL_DESCRIPTION,
    DEFAULT_OUTPUT_TOOL_NAME,
    NativeOutput,
    OutputMode,
    OutputObjectDefinition,
    OutputSpec,
    PendingModelResponse,
    PromptedOutput,
    TextOutput,
    ToolOutput,
    _ChoicesWithActions,
)
from ..profiles import DEFAULT_PROMPTED_OUTPUT_TEMPLATE, ModelProfile
from ..tools import RunContext, ToolDefinition
from .envelope import EnvelopeBuilder, EnvelopeMember, envelope_json_schema, read_envelope
from .partial_output import INVALID, PartialOutputBuilder

__all__ = (
    'OutputProcessor',
    'UnionOutputProcessor',
    'TextOutputProcessor',
    'OutputSchema',
    'TextOutputSchema',
    'ToolOutputSchema',
    'NativeOutputSchema',
    'PromptedOutputSchema',
    'ImageOutputSchema',
    'OutputSpec',
    'build_output_schema',
    'schema_for_profile',
    'output_template',
)

T = TypeVar('T', default=Any)

OUTPUT_TOOLSET_ID = '<output>'
"""The `ToolDefinition.toolset_id` of every output tool (as pydantic-ai 2.x names the agent's output tools)."""


@cache
def _fence_re() -> re.Pattern[str]:
    # A JSON document in a Markdown code fence (compiled by the first text output read, not at import).
    return re.compile(r'^\s*```(?:json)?\s*\n(.*)\n\s*```\s*$', re.DOTALL)


def _is_object_type(tp: Any) -> bool:
    """Types whose JSON schema is an object, so they need no `{'response': ...}` wrapper."""
    return isinstance(tp, type) and (
        issubclass(tp, pydantic.BaseModel)
        or dataclasses.is_dataclass(tp)
        or is_typeddict(tp)
        or getattr(tp, '__is_model_like__', False)  # `StructuredDict`
    )


def _is_function(tp: Any) -> bool:
    return inspect.isfunction(tp) or inspect.ismethod(tp)


@dataclass(kw_only=True)
class OutputProcessor:
    """Validates a structured answer (tool arguments or JSON text) into the output value."""

    name: str
    """The output tool's name (or the schema's name for native and prompted output; `''` for several types given
    no name)."""
    json_schema: dict[str, Any]
    """The JSON schema the model is given."""
    description: str | None
    """The description the model is given."""
    strict: bool | None = None
    """Whether the model should follow the schema strictly."""
    validator: pydantic.TypeAdapter[Any] | None = None
    """Validates the answer (for types)."""
    value_type: Any = None
    """The type `validator` validates (for types): partial outputs are built for it while streaming."""
    wrapped: bool = False
    """Whether the value sits under `'response'` in the answer (for non-object types)."""
    function: FunctionSchema | None = None
    """The output function whose return value is the output."""
    max_retries: int | None = None
    """The output tool's own retry budget (`ToolOutput(max_retries=...)`); the agent's output retries if `None`."""
    sequential: bool = False
    """Whether a call of this output tool is a barrier among the response's calls (`ToolOutput(sequential=True)`)."""
    choice_values: Mapping[str, Any] | None = None
    """For a `Choices` set with callable values: what each key stands for (the model picks a key; `finish` calls
    the action it stands for)."""

    def validate(self, args: str | dict[str, Any] | None, context: Any = None, *, allow_partial: bool = False) -> Any:
        """The answer validated into a value (or into the output function's arguments), for `finish`; `context`
        is the pydantic validation context (`Agent(validation_context=...)`); `allow_partial`: the answer may
        still be arriving (an unfinished last value is left out, an unfinished string kept as far as it goes).

        Raises:
            pydantic.ValidationError: the answer does not match the schema.
        """
        if self.function is not None:
            return self.function.validate_partial(args) if allow_partial else self.function.validate(args, context)
        assert self.validator is not None
        partial: Literal['off', 'trailing-strings'] = 'trailing-strings' if allow_partial else 'off'
        if isinstance(args, str):
            value = self.validator.validate_json(args or '{}', context=context, experimental_allow_partial=partial)
        else:
            value = self.validator.validate_python(args or {}, context=context, experimental_allow_partial=partial)
        return value.response if self.wrapped else value

    async def finish(self, value: Any, ctx: RunContext[Any]) -> Any:
        """The output: `value` itself, or what the output function returns for it (it may raise `ModelRetry`); for a
        `Choices` set with actions, once the pick is final, the value the key picked stands for (an action called)."""
        if self.choice_values is not None and not ctx.partial_output:
            return await _choice_value(self.choice_values[value])
        if self.function is None:
            return value
        return await self.function.call(value, ctx)

    @property
    def calls_function(self) -> bool:
        """Whether the output may come from an output function (partial outputs then call it)."""
        return self.function is not None

    def partial_builder(self) -> tuple[PartialOutputBuilder | EnvelopeBuilder, Callable[[Any], Any]] | None:
        """A builder of partial values of a streaming answer, and what turns its values into outputs; `None` for
        an output function (its arguments are not output)."""
        if self.function is not None or self.value_type is None:
            return None
        return PartialOutputBuilder(self.value_type), _unwrap_response if self.wrapped else _identity

    @property
    def tool_def(self) -> ToolDefinition:
        """The output tool's definition."""
        return ToolDefinition(
            name=self.name,
            parameters_json_schema=self.json_schema,
            description=self.description,
            outer_typed_dict_key='response' if self.wrapped else None,
            strict=self.strict,
            sequential=self.sequential,
            kind='output',
            toolset_id=OUTPUT_TOOLSET_ID,
        )


def _identity(value: Any) -> Any:
    return value


async def _choice_value(value: Any) -> Any:
    """What a picked `Choice` gives: its value, or what its action returns (an `async` one awaited; a plain one run
    in a worker thread, and what it returns awaited when awaitable). A `ModelRetry` it raises asks the model again."""
    if not callable(value):
        return value
    if inspect.iscoroutinefunction(value):
        return await value()
    (result,) = await run_in_thread(lambda: (value(),))  # boxed: trio refuses a thread's result that is a coroutine
    return await result if inspect.isawaitable(result) else result


def _unwrap_response(value: Any) -> Any:
    return getattr(value, 'response', INVALID)


@dataclass
class _Chosen:
    """A validated envelope answer: the kind chosen and its value (for its processor's `finish`)."""

    kind: str
    value: Any


@dataclass(kw_only=True)
class UnionOutputProcessor(OutputProcessor):
    """Native or prompted output of several types, asked for in pydantic-ai's envelope
    `{"result": {"kind": ..., "data": ...}}` (see `_output.envelope`)."""

    members: dict[str, OutputProcessor]
    """The processors of the output types, by kind."""

    def validate(self, args: str | dict[str, Any] | None, context: Any = None, *, allow_partial: bool = False) -> Any:
        """The answer's kind and its data validated by that kind's processor (errors are located in the data).

        Raises:
            pydantic.ValidationError: the answer is no envelope of a known kind, or its data does not validate.
        """
        kind, data = read_envelope(args, self.members, allow_partial=allow_partial, context=context)
        return _Chosen(kind, self.members[kind].validate(data, context, allow_partial=allow_partial))

    async def finish(self, value: Any, ctx: RunContext[Any]) -> Any:
        """The output of the kind chosen (what its output function returns, for a function)."""
        return await self.members[value.kind].finish(value.value, ctx)

    @property
    def calls_function(self) -> bool:
        return any(member.calls_function for member in self.members.values())

    def partial_builder(self) -> tuple[PartialOutputBuilder | EnvelopeBuilder, Callable[[Any], Any]] | None:
        return EnvelopeBuilder(self._member_builder), _identity

    def _member_builder(self, kind: str) -> tuple[PartialOutputBuilder, Callable[[Any], Any]] | None:
        member = self.members.get(kind)
        made = member.partial_builder() if member is not None else None
        if made is None:
            return None
        builder, unwrap = made
        assert isinstance(builder, PartialOutputBuilder)  # members are single types
        return builder, unwrap


@dataclass(kw_only=True)
class TextOutputProcessor:
    """Turns a plain text answer into the output: the text itself, or what a `TextOutput` function returns."""

    function: FunctionSchema | None = None
    """The `TextOutput` function, if any."""

    async def process(self, text: str, ctx: RunContext[Any]) -> Any:
        """The output for `text` (the function may raise `ModelRetry`)."""
        if self.function is None:
            return text
        kwargs = {_first_plain_param(self.function): text}
        output: Any = await self.function.call(kwargs, ctx)
        return output


@dataclass(kw_only=True)
class OutputSchema(Generic[T]):
    """Everything the run needs to know about its output. `build_output_schema` gives the subclass of the
    output mode: `TextOutputSchema`, `ToolOutputSchema`, `NativeOutputSchema` or `PromptedOutputSchema`."""

    mode: OutputMode
    """How the output is asked of the model."""
    allow_text_output: bool
    """Whether a plain text answer may be the output (`str` or `TextOutput` among the output types)."""
    tools: dict[str, OutputProcessor] = field(default_factory=dict)
    """The output tools, by name."""
    text_processor: TextOutputProcessor | None = None
    """Turns text answers into the output, when text may be the output."""
    object_processor: OutputProcessor | None = None
    """Validates JSON text answers (native and prompted output, and stray text in tool mode)."""
    template: str | Literal[False] | None = None
    """The template of the output instructions (`PromptedOutput(template=...)`): the models add it, filled with the
    schema, to the instructions they send; `None`: the model profile's template (prompted output)."""
    allows_none: bool = False
    """Whether `None` is among the output types: an empty response then gives `None`."""
    allows_deferred_tools: bool = False
    """Whether `DeferredToolRequests` is among the output types (a run may end on deferred tool calls)."""
    allows_image: bool = False
    """Whether `BinaryImage` is among the output types: an image the model returns (in a `FilePart`) is then the
    output, before any text."""
    allows_pending_model_response: bool = False
    """Whether `PendingModelResponse` is among the output types: a response the provider is still working on
    (`state='suspended'`) then ends the run, as the output."""
    auto_outputs: list[Any] | None = field(default=None, repr=False)
    """The output types when the output mode is the model's to choose (plain types only, no `str`, `TextOutput` or
    `ToolOutput`): output tools by default, native or prompted output when the model's profile says so."""

    @cached_property
    def object_def(self) -> OutputObjectDefinition | None:
        """The schema sent to the model for native and prompted output."""
        processor = self.object_processor
        if processor is None or self.mode not in ('native', 'prompted'):
            return None
        return OutputObjectDefinition(
            json_schema=processor.json_schema, name=processor.name or None, description=processor.description,
            strict=processor.strict,
        )  # fmt: skip

    @cached_property
    def tool_defs(self) -> list[ToolDefinition]:
        """The output tools' definitions."""
        return [processor.tool_def for processor in self.tools.values()]

    @property
    def allows_text(self) -> bool:
        """Whether a plain text answer may be the output (pydantic-ai's name of `allow_text_output`)."""
        return self.allow_text_output

    @property
    def text_function(self) -> FunctionSchema | None:
        """The `TextOutput` function applied to text answers, if any."""
        return self.text_processor.function if self.text_processor is not None else None

    @property
    def takes_text_as_is(self) -> bool:
        """Whether a plain text answer is the output as it is (text output without a `TextOutput` function): then
        `process_text` returns the text, and needs no run context."""
        processor = self.text_processor
        return (
            self.allow_text_output
            and (processor is None or processor.function is None)
            and type(self).process_text is OutputSchema.process_text
        )

    async def process_text(self, text: str, ctx: RunContext[Any]) -> Any:
        """The output for a plain text answer (text output): the text, or what the `TextOutput` function returns."""
        if self.text_processor is None:
            return text
        return await self.text_processor.process(text, ctx)

    def parse_json_text(self, text: str, context: Any = None) -> Any:
        """The value of a JSON text answer (native or prompted output, or text when only tools are allowed).

        Raises:
            pydantic.ValidationError: the text is not JSON matching the schema.
        """
        assert self.object_processor is not None
        if (match := _fence_re().match(text)) is not None:
            text = match.group(1)
        return self.object_processor.validate(text, context)


@dataclass(kw_only=True)
class TextOutputSchema(OutputSchema[T]):
    """Output given as plain text (`str`, or a `TextOutput` function, only)."""

    mode: OutputMode = 'text'
    allow_text_output: bool = True
    text_processor: TextOutputProcessor | None = field(default_factory=TextOutputProcessor)


@dataclass(kw_only=True)
class ToolOutputSchema(OutputSchema[T]):
    """Output given by calling an output tool (text too, when `str` or `TextOutput` is among the types)."""

    mode: OutputMode = 'tool'
    allow_text_output: bool = False


@dataclass(kw_only=True)
class NativeOutputSchema(OutputSchema[T]):
    """Output given as JSON text following the schema sent with the API's structured output feature."""

    mode: OutputMode = 'native'
    allow_text_output: bool = False


@dataclass(kw_only=True)
class PromptedOutputSchema(OutputSchema[T]):
    """Output given as JSON text following the schema given in the instructions."""

    mode: OutputMode = 'prompted'
    allow_text_output: bool = False


@dataclass(kw_only=True)
class ImageOutputSchema(OutputSchema[T]):
    """Output given as an image only (`output_type=BinaryImage`)."""

    mode: OutputMode = 'image'
    allow_text_output: bool = False
    allows_image: bool = True


def _first_plain_param(schema: FunctionSchema) -> str:
    names: list[str] = list(schema.json_schema.get('properties', {}))
    return names[0]


def _members(output_type: Any) -> list[Any]:
    if isinstance(output_type, Sequence) and not isinstance(output_type, str):
        members: list[Any] = []
        for item in output_type:
            members.extend(_members(item))
        return members
    if get_origin(output_type) in (Union, types.UnionType):
        return list(get_args(output_type))
    return [output_type]


def _processor(output: Any, *, name: str, description: str | None, strict: bool | None) -> OutputProcessor:
    if isinstance(output, type) and issubclass(output, _ChoicesWithActions):
        processor = _processor(output.keys_type, name=name, description=description, strict=strict)
        processor.choice_values = output.values
        return processor
    if _is_function(output):
        schema = function_schema(output, takes_ctx=takes_run_context(output), name=name)
        json_schema = dict(schema.json_schema)
        json_schema.pop('description', None)
        return OutputProcessor(
            name=name, json_schema=json_schema, description=_joined(description, schema.description),
            strict=strict, function=schema,
        )  # fmt: skip
    if _is_object_type(output):
        adapter: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(output)
        json_schema = _strip_field_titles(adapter.json_schema(schema_generator=GenerateOutputJsonSchema))
        own = json_schema.pop('description', None)
        return OutputProcessor(
            name=name, json_schema=json_schema, description=_joined(description, own),
            strict=strict, validator=adapter, value_type=output,
        )  # fmt: skip
    model = pydantic.create_model(name, response=(output, ...))
    json_schema = _strip_field_titles(model.model_json_schema(schema_generator=GenerateOutputJsonSchema))
    json_schema.pop('title', None)
    # Some models send the wrapped value as a JSON string (`{"response": "[1, 2]"}`): it is accepted too.
    lenient_type: Any = Union[output, pydantic.Json[output]]  # type: ignore[misc]  # noqa: UP007
    lenient = pydantic.create_model(name, response=(lenient_type, ...))
    return OutputProcessor(
        name=name, json_schema=json_schema, description=description, strict=strict,
        validator=pydantic.TypeAdapter(lenient), value_type=model, wrapped=True,
    )  # fmt: skip


def _joined(given: str | None, own: str | None) -> str | None:
    """A description given with the output spec, followed by the type's (or function's) own one."""
    if given and own:
        return f'{given}. {own}'
    return given or own


def _strip_field_titles(schema: Any) -> Any:
    """Drop the titles pydantic derives from field names (noise for a model); class titles stay."""
    if isinstance(schema, dict):
        props = schema.get('properties')
        if isinstance(props, dict):
            for prop in props.values():
                prop.pop('title', None)
        for value in schema.values():
            _strip_field_titles(value)
    elif isinstance(schema, list):
        for item in schema:
            _strip_field_titles(item)
    return schema


def _safe_type_name(output: Any) -> str:
    name = getattr(output, '__name__', None) or repr(output)
    return re.sub(r'[^A-Za-z0-9_]+', '_', name).strip('_')


@cache
def _tool_name_unsafe() -> re.Pattern[str]:
    return re.compile(r'[^a-zA-Z0-9_-]')


def _type_name(output: Any, processor: OutputProcessor) -> str:
    """The name of an output type as pydantic-ai shows it: its schema's title, or its `__name__`."""
    title = None if processor.wrapped else processor.json_schema.get('title')
    return str(title or getattr(output, '__name__', None) or repr(output))


def build_output_schema(output_type: Any) -> OutputSchema:
    """The output schema for `Agent(output_type=...)`.

    Raises:
        UserError: the output type mixes native or prompted output with other kinds, or names no output.
    """
    if isinstance(output_type, NativeOutput | PromptedOutput):
        return _object_schema(output_type)
    members = _members(output_type)
    if PendingModelResponse in members:  # not something the model answers: it shapes neither mode nor schema
        rest = [member for member in members if member is not PendingModelResponse]
        if not rest:
            raise UserError('At least one output type must be provided other than `PendingModelResponse`.')
        schema = build_output_schema(rest[0] if len(rest) == 1 else rest)
        schema.allows_pending_model_response = True
        return schema
    if DeferredToolRequests in members:
        rest = [member for member in members if member is not DeferredToolRequests]
        if not rest:
            raise UserError('At least one output type must be provided other than `DeferredToolRequests`.')
        schema = build_output_schema(rest[0] if len(rest) == 1 else rest)
        schema.allows_deferred_tools = True
        return schema
    if BinaryImage in members:
        rest = [member for member in members if member is not BinaryImage]
        if all(member is None or member is types.NoneType for member in rest):
            return ImageOutputSchema(allows_none=bool(rest))
        schema = build_output_schema(rest[0] if len(rest) == 1 else rest)
        schema.allows_image = True
        return schema
    allows_none = any(member is None or member is types.NoneType for member in members)
    members = [member for member in members if member is not None and member is not types.NoneType]
    if not members:
        other_than = ' other than `None`' if allows_none else ''
        raise UserError(f'At least one output type must be provided{other_than}.')
    if sum(1 for member in members if member is str or isinstance(member, TextOutput)) > 1:
        raise UserError('Only one `str` or `TextOutput` is allowed.')
    allow_text = False
    text_function: FunctionSchema | None = None
    tool_items: list[tuple[Any, ToolOutput[Any] | None]] = []
    for member in members:
        if member is str:
            allow_text = True
        elif isinstance(member, TextOutput):
            allow_text = True
            fn = member.output_function
            text_function = function_schema(fn, takes_ctx=takes_run_context(fn), name=getattr(fn, '__name__', None))
            params = list(text_function.json_schema.get('properties', {}).values())
            if len(params) != 1 or params[0].get('type') != 'string':
                raise UserError('TextOutput must take a function taking a single `str` argument')
        elif isinstance(member, NativeOutput | PromptedOutput):
            raise UserError(f'`{type(member).__name__}` must be the only output type.')
        elif isinstance(member, ToolOutput):
            tool_items.append((member.output, member))
        else:
            tool_items.append((member, None))
    text_processor = TextOutputProcessor(function=text_function) if allow_text else None
    if not tool_items:
        return TextOutputSchema(text_processor=text_processor, allows_none=allows_none)
    if allows_none:
        tool_items.append((types.NoneType, None))  # the model may also answer `None` with a tool call
    tools: dict[str, OutputProcessor] = {}
    many = len(tool_items) > 1
    for output, spec in tool_items:
        named = spec is not None and spec.name
        description = spec.description if spec is not None else None
        processor = _processor(
            output, name=DEFAULT_OUTPUT_TOOL_NAME, description=description, strict=spec.strict if spec else None
        )
        processor.max_retries = spec.max_retries if spec is not None else None
        processor.sequential = spec.sequential if spec is not None else False
        type_name = _type_name(output, processor)
        name = spec.name if spec is not None and spec.name else DEFAULT_OUTPUT_TOOL_NAME
        if many and not named:
            name = f'{name}_{_tool_name_unsafe().sub("", type_name)}'
        # Same-named output tools (`list[str] | list[int]`, or a type given twice) are numbered from the second.
        base, n = name, 1
        while name in tools:
            n += 1
            name = f'{base}_{n}'
        processor.name = name
        if not processor.description:
            default = DEFAULT_OUTPUT_TOOL_DESCRIPTION
            processor.description = f'{type_name}: {default}' if many else default
        tools[name] = processor
    # Plain types only (pydantic-ai's 'auto' output): a JSON text answer is read as the first tool's arguments too.
    # An explicit `ToolOutput` asks for a tool call, and text is answered with a retry prompt.
    explicit = any(spec is not None for _, spec in tool_items)
    auto = not allow_text and not explicit
    object_processor: OutputProcessor | None = None if explicit else next(iter(tools.values()))
    if auto and many:  # several types: JSON text is read in the envelope naming its kind (pydantic-ai 2.x)
        object_processor = _union_processor(
            [output for output, _ in tool_items], name=None, description=None, strict=None
        )
    return ToolOutputSchema(  # also with text allowed: pydantic-ai 1.x no longer uses 'tool_or_text'
        allow_text_output=allow_text,
        tools=tools,
        text_processor=text_processor,
        object_processor=object_processor,
        allows_none=allows_none,
        auto_outputs=[output for output, _ in tool_items] if auto else None,
    )


def _object_schema(spec: NativeOutput[Any] | PromptedOutput[Any]) -> OutputSchema:
    # `None` among the types is the `NoneType` kind (pydantic-ai 1.107 fails on it, wanting `type(None)`).
    members = [types.NoneType if member is None else member for member in _members(spec.outputs)]
    for kind in (DeferredToolRequests, PendingModelResponse, BinaryImage):  # each goes beside the marker, not inside
        if kind in members:
            marker, name = type(spec).__name__, kind.__name__
            raise UserError(
                f'`{marker}` cannot contain `{name}`. Include it alongside the {marker[:-6].lower()} output marker '
                f'instead: `output_type=[{marker}(...), {name}]`'
            )
    strict = spec.strict if isinstance(spec, NativeOutput) else None
    processor: OutputProcessor
    if len(members) > 1:
        processor = _union_processor(members, name=spec.name, description=spec.description, strict=strict)
    else:
        name = spec.name or _safe_type_name(members[0])
        processor = _processor(members[0], name=name, description=spec.description, strict=strict)
    if isinstance(spec, NativeOutput):
        return NativeOutputSchema(object_processor=processor)
    return PromptedOutputSchema(object_processor=processor, template=spec.template)


def _union_processor(
    outputs: list[Any], *, name: str | None, description: str | None, strict: bool | None
) -> UnionOutputProcessor:
    """The processor of several output types in pydantic-ai's envelope; `name` and `description` are the whole
    schema's (pydantic-ai 1.107 loses a given `description`, a slip fixed in its later releases)."""
    members: dict[str, OutputProcessor] = {}
    envelope: list[EnvelopeMember] = []
    for output in outputs:
        processor = _processor(output, name=_safe_type_name(output), description=None, strict=strict)
        title = _type_name(output, processor)
        kind, n = title, 1
        while kind in members:  # types of one name are told apart by number, from the second
            n += 1
            kind = f'{title}_{n}'
        members[kind] = processor
        json_schema = dict(processor.json_schema)
        json_schema.pop('title', None)
        envelope.append(EnvelopeMember(kind, json_schema, title, processor.description))
    return UnionOutputProcessor(
        name=name or '', json_schema=envelope_json_schema(envelope), description=description, strict=strict,
        members=members,
    )  # fmt: skip


def schema_for_profile(schema: OutputSchema, profile: ModelProfile) -> OutputSchema:
    """The schema a run uses with a model of `profile`: `schema` itself, or, when the output mode is the model's to
    choose, the native or prompted variant its `default_structured_output_mode` asks for (made once per schema).

    Raises:
        UserError: the model cannot give output of this kind (native, tool, text or image output).
    """
    if schema.auto_outputs is not None and (mode := profile.get('default_structured_output_mode', 'tool')) != 'tool':
        variants: dict[Any, OutputSchema] = schema.__dict__.setdefault('_variants', {})
        found = variants.get(mode)
        if found is None:
            outputs = schema.auto_outputs
            found = _object_schema(NativeOutput(outputs) if mode == 'native' else PromptedOutput(outputs))
            found.allows_none = schema.allows_none
            found.allows_deferred_tools = schema.allows_deferred_tools
            found.allows_image = schema.allows_image
            found.allows_pending_model_response = schema.allows_pending_model_response
            variants[mode] = found
        schema = found
    # The messages are pydantic-ai's (its models check their profile before each request).
    if schema.mode == 'native' and not profile.get('supports_json_schema_output', False):
        raise UserError('Native structured output is not supported by this model.')
    if schema.mode == 'tool' and not profile.get('supports_tools', True):
        raise UserError('Tool output is not supported by this model.')
    if schema.allow_text_output and not profile.get('supports_text_output', True):
        raise UserError(
            'Text output is not supported by this model. Give the agent one structured `output_type` (a '
            '`BaseModel`, say) without `str`, `NativeOutput` or `PromptedOutput`.'
        )
    if schema.allows_image and not profile.get('supports_image_output', False):
        raise UserError('Image output is not supported by this model.')
    return schema


def output_template(schema: OutputSchema, profile: ModelProfile) -> str | Literal[False] | None:
    """The `prompted_output_template` of a request: prompted output's own template, else the profile's; native output
    has one only when the profile needs the schema in the instructions too."""
    if schema.template is not None:
        return schema.template
    if schema.mode == 'prompted' or (
        schema.mode == 'native' and profile.get('native_output_requires_schema_in_instructions', False)
    ):
        return profile.get('prompted_output_template', DEFAULT_PROMPTED_OUTPUT_TEMPLATE)
    return None


def validation_errors(error: pydantic.ValidationError) -> list[pydantic_core.ErrorDetails]:
    """The errors of a validation failure as sent to the model (no URLs, no context objects)."""
    return error.errors(include_url=False, include_context=False)


OutputFunction = Callable[..., Any]
