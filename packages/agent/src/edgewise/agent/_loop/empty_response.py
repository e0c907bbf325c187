"""What a model response without text or tool calls means (empty, or reasoning only), as in pydantic-ai 1.107:
the token limit was hit, `None` is the output, text from an earlier response is the output, or the model is
asked again."""

from __future__ import annotations as _annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .._run.deps import GraphAgentDeps
from ..capabilities.content_filter import content_filter_error
from ..exceptions import UnexpectedModelBehavior
from ..messages import ModelMessage, ModelResponse, TextPart

__all__ = ('NoOutput', 'no_output_answer')


@dataclass(frozen=True)
class NoOutput:
    """The answer to a response with no output in it: `None` is the output (`retry is None`), or the model is
    sent `retry` as a retry prompt."""

    retry: str | None


def no_output_answer(
    response: ModelResponse, history: Sequence[ModelMessage], deps: GraphAgentDeps[Any, Any]
) -> str | NoOutput | None:
    """What to do with `response`, which has no text and no tool calls: text recovered from an earlier
    response of the run (the output, when text is), a `NoOutput`, or `None` to send the same request again
    (an empty response).

    Raises:
        UnexpectedModelBehavior: the model stopped at its token limit (`finish_reason='length'`): asking
            again would hit it again.
        ContentFilterError: the response is empty because the provider's content filter stopped it.
    """
    if response.finish_reason == 'length':
        settings = deps.model_settings or {}
        limit = settings.get('max_tokens') or 'provider default'
        raise UnexpectedModelBehavior(
            f'Model token limit ({limit}) exceeded before any response was generated. Increase the `max_tokens` '
            'model setting, or simplify the prompt to result in a shorter response that will fit within the limit.'
        )
    empty = not response.parts
    if empty and response.finish_reason == 'content_filter':
        raise content_filter_error(response)
    schema = deps.output_schema
    if empty and schema.allows_none:
        return NoOutput(None)
    text_is_output = schema.allow_text_output or schema.mode in ('native', 'prompted')
    if text_is_output and (text := _earlier_text(history, response)) is not None:
        return text
    if empty:
        return None
    alternatives: list[str] = []
    if schema.tools:
        alternatives.append('include your response in a tool call')
    elif deps.step_tools:
        alternatives.append('call a tool')
    if schema.allows_image:
        alternatives.append('return an image')
    if text_is_output:
        alternatives.insert(0, 'return text')
    return NoOutput(f'Please {" or ".join(alternatives)}.')


def _earlier_text(history: Sequence[ModelMessage], current: ModelResponse) -> str | None:
    """The text of the latest earlier response that had some (given with tool calls, so not taken then)."""
    for message in reversed(history):
        if isinstance(message, ModelResponse) and message is not current:
            text = ''.join(part.content for part in message.parts if isinstance(part, TextPart))
            if text:
                return text
    return None
