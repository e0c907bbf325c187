"""`end_strategy='early'` with a response that gives its output beside tool calls (pydantic-ai 2.x): an image, or
text validated against a schema (native, prompted, or a plain structured type), that is a valid output ends the run
when every call is of a function tool or of an unknown one; those calls are answered as skipped, never run.

Plain text output (`str`, `TextOutput`, text among other output types) never ends the run this way: any text
would pass, and text beside tool calls is most often the model's preamble. An output that does not validate is no
output here (no retry is spent): the calls run as usual."""

from __future__ import annotations as _annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

import pydantic

from edgewise.graph import End

from .._run.deps import GraphAgentDeps
from .._run.result import FinalResult
from .._run.state import GraphAgentState
from ..exceptions import ModelRetry
from ..messages import ModelRequest, ModelResponse, ToolCallPart
from ..tools import ToolDefinition
from .call_tools_parts import TOOL_SKIPPED, answer_text, status_part, validate_output
from .output_hooks import OUTPUT_HOOKS, answer_through_hooks

__all__ = ('end_early',)


async def end_early(
    response: ModelResponse,
    calls: Sequence[ToolCallPart],
    output_tools: Mapping[str, Any],
    step_tools: Mapping[str, ToolDefinition],
    state: GraphAgentState,
    deps: GraphAgentDeps[Any, Any],
) -> End[FinalResult[Any]] | None:
    """The end of the run when `response` (with tool `calls`) also gives a valid output that wins under the 'early'
    strategy; the calls, skipped, are answered in a request added to the history. `None` when it does not."""
    for call in calls:
        if call.tool_name in output_tools:
            return None  # an output tool call gives the output
        tool = step_tools.get(call.tool_name)
        if tool is not None and tool.kind != 'function':
            return None  # a deferred call is given back to the caller
    found, output = await _response_output(response, state, deps)
    if not found:
        return None
    skipped = [status_part(call, TOOL_SKIPPED) for call in calls]
    now = datetime.now(tz=timezone.utc)
    state.message_history.append(
        ModelRequest(skipped, timestamp=now, run_id=state.run_id, conversation_id=state.conversation_id)
    )
    return End(FinalResult(output))


async def _response_output(
    response: ModelResponse, state: GraphAgentState, deps: GraphAgentDeps[Any, Any]
) -> tuple[bool, Any]:
    """Whether the response gives a valid image or schema-validated text output besides its calls, and that
    output (an image before text)."""
    schema = deps.output_schema
    ctx = deps.run_context(state, retry=state.retries, max_retries=deps.max_result_retries)
    hooked = bool(deps.hooked & OUTPUT_HOOKS)
    try:
        if schema.allows_image and (images := response.images):
            if hooked:
                return True, await answer_through_hooks(deps, ctx, 'image', images[0])
            return True, await validate_output(images[0], ctx, deps)
        processor = schema.object_processor
        if processor is None or schema.allow_text_output or not (text := answer_text(response)):
            return False, None
        if hooked:
            return True, await answer_through_hooks(deps, ctx, 'json', text)
        value = schema.parse_json_text(text, deps.validation_context_for(ctx))
        return True, await validate_output(await processor.finish(value, ctx), ctx, deps)
    except (pydantic.ValidationError, ModelRetry):
        return False, None
