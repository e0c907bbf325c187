"""Validating a whole (or partly streamed) `ModelResponse` into an output value, outside the run's own loop
(`StreamedRunResult.validate_response_output`, `AgentStream.validate_response_output`)."""

from __future__ import annotations as _annotations

from typing import Any

import pydantic

from edgewise.graph import GraphRunContext

from .._output.schema import OutputProcessor
from .._run.deps import GraphAgentDeps
from .._run.state import GraphAgentState
from .._tools.deferred_calls import DeferredToolRequests
from ..exceptions import ModelRetry, UnexpectedModelBehavior, UserError
from ..messages import ModelResponse, TextPart, ToolCallPart
from ..output import PendingModelResponse

__all__ = ('deferred_requests', 'validate_response')


async def validate_response(
    run: GraphRunContext[GraphAgentState, GraphAgentDeps[Any, Any]], message: ModelResponse, *, allow_partial: bool
) -> Any:
    """The output value `message` holds for the output type of the run (`run`: its graph context), with the
    output validators applied.

    The first call of an output tool wins; otherwise the calls of external tools and tools needing approval (the
    `DeferredToolRequests` the run would end on), else the first image (when an image is an output type), else the
    text parts (joined) are the answer. With
    `allow_partial`, an unfinished JSON value is accepted, and output functions are called with
    `ctx.partial_output` set (as in pydantic-ai 1.107).

    Raises:
        UnexpectedModelBehavior: the response holds no answer for the output type, or (without
            `allow_partial`) the answer does not validate: the run cannot retry from here.
        pydantic.ValidationError, ModelRetry: the answer does not validate (with `allow_partial`).
    """
    deps = run.deps
    schema = deps.output_schema
    if not allow_partial and message.state == 'suspended' and schema.allows_pending_model_response:
        return PendingModelResponse(response=message)  # the stream ended with the provider still at work
    ctx = deps.run_context(run.state).replace_with(partial_output=allow_partial)
    try:
        call = next((p for p in message.parts if isinstance(p, ToolCallPart) and p.tool_name in schema.tools), None)
        value: Any
        if call is not None:
            processor = schema.tools[call.tool_name]
            value = _validate(processor, call.args, allow_partial)
            value = await processor.finish(value, ctx)  # output functions see `ctx.partial_output`
        elif (deferred := deferred_requests(message, deps)) is not None:
            if not schema.allows_deferred_tools:
                raise UserError(
                    'A deferred tool call was present, but `DeferredToolRequests` is not among output types. '
                    'To resolve this, add `DeferredToolRequests` to the list of output types for this agent.'
                )
            return deferred  # what the run would end on; output validators see no deferred requests (pydantic-ai)
        elif schema.allows_image and (images := message.images):
            value = images[0]
        else:
            texts = [part.content for part in message.parts if isinstance(part, TextPart)]
            if not texts:
                raise UnexpectedModelBehavior('Invalid response, unable to find output')
            text = ''.join(texts)
            if schema.allow_text_output:
                value = await schema.process_text(text, ctx)
            elif schema.object_processor is not None and schema.mode in ('native', 'prompted'):
                value = _validate(schema.object_processor, text, allow_partial)
                value = await schema.object_processor.finish(value, ctx)
            else:
                raise UnexpectedModelBehavior('Invalid response, unable to process text output')
        for validator in deps.output_validators:
            value = await validator.validate(value, ctx)
    except (pydantic.ValidationError, ModelRetry) as error:
        if allow_partial:
            raise
        raise UnexpectedModelBehavior(
            'Output validation failed during streaming, and retries are not supported in `run_stream()`'
        ) from error
    return value


def deferred_requests(message: ModelResponse, deps: GraphAgentDeps[Any, Any]) -> DeferredToolRequests | None:
    """The calls of external tools and of tools needing approval in `message`, as the step's tools define them
    (`None` when there are none)."""
    tools = deps.step_tools or {}
    calls: list[ToolCallPart] = []
    approvals: list[ToolCallPart] = []
    for part in message.parts:
        if isinstance(part, ToolCallPart) and (tool := tools.get(part.tool_name)) is not None:
            if tool.kind == 'external':
                calls.append(part)
            elif tool.kind == 'unapproved':
                approvals.append(part)
    return DeferredToolRequests(calls=calls, approvals=approvals) if calls or approvals else None


def _validate(processor: OutputProcessor, args: str | dict[str, Any] | None, allow_partial: bool) -> Any:
    return processor.validate(args, allow_partial=allow_partial)
