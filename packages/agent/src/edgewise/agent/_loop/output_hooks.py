"""The capabilities' output hooks around the validation and the processing of a run's output, as pydantic-ai 1.107
calls them: `*_output_validate` around parsing a structured output (an output tool's arguments, native or prompted
JSON text), `*_output_process` around turning the value into the output (output function, output validators) for
every kind of output (text, structured, image, `None`).

A run goes through here only when one of its capabilities implements an output hook (`OUTPUT_HOOKS`). Errors keep
the run's own meaning: a `ValidationError` or `ModelRetry` out of any hook asks the model again.
"""

from __future__ import annotations as _annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from functools import partial
from typing import Any, Literal, get_origin, get_type_hints

from pydantic import ValidationError

from .._functions.schema import FunctionSchema
from .._output.schema import OutputProcessor, OutputSchema, UnionOutputProcessor
from .._run.deps import GraphAgentDeps
from ..capabilities._hook_table import hook_names
from ..exceptions import ModelRetry
from ..messages import BinaryImage, ToolCallPart
from ..output import OutputContext, OutputObjectDefinition
from ..tools import RunContext, ToolDefinition

__all__ = (
    'OUTPUT_HOOKS',
    'answer_through_hooks',
    'output_call_through_hooks',
    'output_context',
    'processor_steps',
    'output_through_hooks',
    'process_with_hooks',
    'validate_with_hooks',
)

OUTPUT_HOOKS = hook_names('output')
"""The hooks that make a run validate and process its output through `validate_with_hooks`/`process_with_hooks`."""


def output_context(
    schema: OutputSchema[Any],
    kind: OutputProcessor | type[BinaryImage] | str | None,
    *,
    tool_call: ToolCallPart | None = None,
    tool_def: ToolDefinition | None = None,
) -> OutputContext:
    """What the hooks are told about the output at hand: `kind` is the processor of a structured output, `'text'`
    for a text answer, `BinaryImage` (the class) for an image, `None` for the `None` output of an empty answer."""
    mode: Any = 'tool' if tool_call is not None else schema.mode
    output_type: Any
    object_def = None
    function_name = None
    if isinstance(kind, OutputProcessor):
        function = kind.function
        output_type = kind.value_type
        if function is not None:
            function_name = getattr(function.function, '__name__', None)
            output_type = _first_param_type(function)
        object_def = OutputObjectDefinition(
            json_schema=kind.json_schema, name=kind.name, description=kind.description, strict=kind.strict
        )
    elif kind == 'text':
        function = schema.text_function
        output_type = str
        if function is not None:
            function_name = getattr(function.function, '__name__', None)
    elif kind is None:
        function, output_type, mode = None, type(None), 'text'
    else:
        function, output_type, mode = None, BinaryImage, 'image'
    return OutputContext(
        mode=mode,
        output_type=output_type,
        object_def=object_def,
        has_function=function is not None,
        function_name=function_name,
        tool_call=tool_call,
        tool_def=tool_def,
        allows_text=schema.allow_text_output,
        allows_image=schema.allows_image or kind is BinaryImage,
        allows_deferred_tools=schema.allows_deferred_tools,
    )


async def validate_with_hooks(
    capability: Any,
    ctx: RunContext[Any],
    context: OutputContext,
    raw: str | dict[str, Any],
    do_validate: Callable[[str | dict[str, Any]], Awaitable[Any]],
    *,
    allow_partial: bool = False,
) -> Any:
    """`do_validate(raw)` inside the validate hooks: `before_output_validate` gives the raw output to validate,
    `wrap_output_validate` goes around the validation, `on_output_validate_error` may recover from a
    `ValidationError` or `ModelRetry` (not for partial outputs), `after_output_validate` gives the value."""
    raw = await capability.before_output_validate(ctx, output_context=context, output=raw)
    try:
        value = await capability.wrap_output_validate(ctx, output_context=context, output=raw, handler=do_validate)
    except (ValidationError, ModelRetry) as error:
        if allow_partial:
            raise
        value = await capability.on_output_validate_error(ctx, output_context=context, output=raw, error=error)
    return await capability.after_output_validate(ctx, output_context=context, output=value)


async def process_with_hooks(
    capability: Any,
    ctx: RunContext[Any],
    context: OutputContext,
    value: Any,
    do_process: Callable[[Any], Awaitable[Any]],
) -> Any:
    """`do_process(value)` inside the process hooks: `before_output_process` gives the value to process,
    `wrap_output_process` goes around the processing, `on_output_process_error` may recover from an error other
    than `ModelRetry` (which asks the model again), `after_output_process` gives the output."""
    value = await capability.before_output_process(ctx, output_context=context, output=value)
    try:
        output = await capability.wrap_output_process(ctx, output_context=context, output=value, handler=do_process)
    except ModelRetry:
        raise
    except Exception as error:
        output = await capability.on_output_process_error(ctx, output_context=context, output=value, error=error)
    return await capability.after_output_process(ctx, output_context=context, output=output)


async def output_through_hooks(
    capability: Any,
    ctx: RunContext[Any],
    context: OutputContext,
    raw: Any,
    validate: Callable[[Any], Any] | None,
    process: Callable[[Any], Awaitable[Any]],
    *,
    validator_ctx: RunContext[Any] | None = None,
    validators: Sequence[Any] = (),
) -> Any:
    """The output of `raw` through the hooks: validated by `validate` (a structured output; `None`: nothing to parse)
    inside the validate hooks, then processed by `process` and the output validators (which see `validator_ctx`,
    by default `ctx`) inside the process hooks."""
    if validate is not None:

        async def do_validate(data: Any) -> Any:
            return validate(data)

        raw = await validate_with_hooks(capability, ctx, context, raw, do_validate)

    async def do_process(value: Any) -> Any:
        output = await process(value)
        for validator in validators:
            output = await validator.validate(output, validator_ctx or ctx)
        return output

    return await process_with_hooks(capability, ctx, context, raw, do_process)


def processor_steps(
    processor: OutputProcessor, ctx: RunContext[Any], validation_context: Any, parse: Callable[[str], Any] | None = None
) -> tuple[Callable[[Any], Any], Callable[[Any], Awaitable[Any]]]:
    """How the hooks validate and process a structured output of `processor`, on the value the model was asked
    for: the output type's value, or for an output function of one parameter that parameter's value (the hooks
    then see it, not the arguments dict); `parse` validates JSON text (native or prompted output)."""
    if isinstance(processor, UnionOutputProcessor):
        return _union_steps(processor, ctx, validation_context, parse)
    only = _only_param(processor.function) if processor.function is not None else None

    def validate(data: Any) -> Any:
        value = (
            parse(data) if parse is not None and isinstance(data, str) else processor.validate(data, validation_context)
        )
        return value if only is None else value[only]

    async def process(value: Any) -> Any:
        return await processor.finish(value if only is None else {only: value}, ctx)

    return validate, process


def _union_steps(
    processor: UnionOutputProcessor, ctx: RunContext[Any], validation_context: Any, parse: Callable[[str], Any] | None
) -> tuple[Callable[[Any], Any], Callable[[Any], Awaitable[Any]]]:
    """`processor_steps` for several output types: the hooks see the chosen type's value (as for that type alone),
    and the value they give is processed as the chosen type's when it still is one, else as the first type's it is
    an instance of (an output function of several parameters takes no part in that search), else it is the output
    as it is."""
    chosen: list[str] = []
    steps = {kind: processor_steps(member, ctx, validation_context) for kind, member in processor.members.items()}

    def validate(data: Any) -> Any:
        found = (
            parse(data) if parse is not None and isinstance(data, str) else processor.validate(data, validation_context)
        )
        chosen[:] = [found.kind]
        member = processor.members[found.kind]
        only = _only_param(member.function) if member.function is not None else None
        return found.value if only is None else found.value[only]

    async def process(value: Any) -> Any:
        kinds = [*chosen, *processor.members]
        for kind in kinds:
            if _is_value_of(processor.members[kind], value, chosen=kind in chosen):
                return await steps[kind][1](value)
        return value

    return validate, process


def _is_value_of(member: OutputProcessor, value: Any, *, chosen: bool) -> bool:
    """Whether `value` is a value of `member`'s type (for an output function of several parameters, its arguments
    dict, which only the type the model chose can claim)."""
    if member.function is not None and _only_param(member.function) is None:
        return chosen and isinstance(value, dict)
    if member.function is not None:
        expected = _first_param_type(member.function)
    elif member.wrapped:
        expected = member.value_type.model_fields['response'].annotation
    else:
        expected = member.value_type
    try:
        return isinstance(value, expected)
    except TypeError:  # a generic alias (`list[Bar]`) or a special form: its origin tells
        origin = get_origin(expected)
        return isinstance(origin, type) and isinstance(value, origin)


def _params(function: FunctionSchema) -> list[inspect.Parameter]:
    params = list(inspect.signature(function.function).parameters.values())
    return params[1:] if function.takes_ctx else params


def _only_param(function: FunctionSchema) -> str | None:
    params = _params(function)
    return params[0].name if len(params) == 1 else None


def _first_param_type(function: FunctionSchema) -> Any:
    params = _params(function)
    if not params:
        return None
    try:
        hints = get_type_hints(function.function)
    except Exception:  # unresolvable annotations: the type stays unknown
        return None
    return hints.get(params[0].name)


async def answer_through_hooks(
    deps: GraphAgentDeps[Any, Any], ctx: RunContext[Any], kind: Literal['text', 'json', 'image', 'none'], answer: Any
) -> Any:
    """The output of an answer that is not an output tool call, through the hooks: a text answer (`'text'`: the
    text, or what the `TextOutput` function makes of it), native or prompted JSON text (`'json'`), an image, or the
    `None` of an empty answer (`'none'`)."""
    schema = deps.output_schema
    validate: Callable[[Any], Any] | None = None
    process: Callable[[Any], Awaitable[Any]] = _same
    if kind == 'text':
        context = output_context(schema, 'text')
        process = partial(schema.process_text, ctx=ctx)
    elif kind == 'json':
        processor = schema.object_processor
        assert processor is not None
        context = output_context(schema, processor)
        validation_context = deps.validation_context_for(ctx)
        validate, process = processor_steps(
            processor, ctx, validation_context, partial(schema.parse_json_text, context=validation_context)
        )
    else:
        context = output_context(schema, BinaryImage if kind == 'image' else None)
    return await output_through_hooks(
        deps.root_capability, ctx, context, answer, validate, process, validators=deps.output_validators
    )


async def _same(value: Any) -> Any:
    return value


async def output_call_through_hooks(
    deps: GraphAgentDeps[Any, Any],
    processor: OutputProcessor,
    call: ToolCallPart,
    ctx: RunContext[Any],
    validator_ctx: RunContext[Any],
) -> Any:
    """The output of an output tool call through the hooks (which see the call's run context `ctx`; the output
    validators see `validator_ctx`; both hold the validation context the caller computed for the call)."""
    validation_context = ctx.validation_context
    return await output_through_hooks(
        deps.root_capability,
        ctx,
        output_context(deps.output_schema, processor, tool_call=call, tool_def=processor.tool_def),
        call.args if call.args is not None else {},
        *processor_steps(processor, ctx, validation_context),
        validator_ctx=validator_ctx,
        validators=deps.output_validators,
    )
