"""What a model response with nothing to act on means (no parts, only empty text, or only reasoning), as in
pydantic-ai 2.x: the token limit was hit, the content filter stopped it, `None` is the output, or the model is
asked again (the retry prompt naming the kinds of output it may give). Text of an earlier response is never
reused as the output (pydantic-ai 1.x did)."""

from __future__ import annotations as _annotations

from dataclasses import dataclass
from typing import Any

from .._run.deps import GraphAgentDeps
from ..exceptions import UnexpectedModelBehavior
from ..messages import ModelResponse, TextPart, ThinkingPart
from .call_tools_parts import no_output_retry

__all__ = ('NoOutput', 'no_output_answer')


@dataclass(frozen=True)
class NoOutput:
    """The answer to a response with no output in it: `None` is the output (`retry is None`), or the model is
    sent `retry` as a retry prompt."""

    retry: str | None


def no_output_answer(response: ModelResponse, deps: GraphAgentDeps[Any, Any]) -> NoOutput | None:
    """What to do with `response` when it has nothing to act on; `None` when it has (text, a tool call, a file,
    a native tool call, a compaction summary...).

    Raises:
        UnexpectedModelBehavior: the model stopped at its token limit (`finish_reason='length'`): asking
            again would hit it again.
        ContentFilterError: the provider's content filter stopped a response with no text in it.
    """
    parts = response.parts
    blank = all(isinstance(part, TextPart) and not part.content for part in parts)  # also when there is no part
    if not blank and not all(_is_reasoning_or_blank(part) for part in parts):
        return None
    if response.finish_reason == 'length':
        settings = deps.model_settings or {}
        limit = settings.get('max_tokens') or 'provider default'
        raise UnexpectedModelBehavior(
            f'Model token limit ({limit}) exceeded before any response was generated. Increase the `max_tokens` '
            'model setting, or simplify the prompt to result in a shorter response that will fit within the limit.'
        )
    if blank and response.finish_reason == 'content_filter':
        from ..capabilities.content_filter import content_filter_error  # (a filtered response loads it)

        raise content_filter_error(response)
    if deps.output_schema.allows_none:
        return NoOutput(None)
    return NoOutput(no_output_retry(deps.output_schema, deps.step_tools))


def _is_reasoning_or_blank(part: object) -> bool:
    return isinstance(part, ThinkingPart) or (isinstance(part, TextPart) and not part.content)
