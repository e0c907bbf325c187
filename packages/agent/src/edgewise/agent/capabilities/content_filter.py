"""`RaiseContentFilterError`: a response the provider's content filter stopped ends the run with `ContentFilterError`,
even when it holds partial text or a refusal."""

from __future__ import annotations as _annotations

from dataclasses import dataclass

from ..exceptions import ContentFilterError
from ..messages import ModelMessagesTypeAdapter, ModelResponse
from ..models import ModelRequestContext
from ..tools import AgentDepsT, RunContext
from .abstract import AbstractCapability

__all__ = ('RaiseContentFilterError', 'content_filter_error')


@dataclass
class RaiseContentFilterError(AbstractCapability[AgentDepsT]):
    """Raise `ContentFilterError` for every model response with `finish_reason='content_filter'`.

    Without it, only an empty filtered response ends the run; a filtered response with some text or a refusal is
    taken as it is. The error's `body` is the whole response as JSON (a list of one message), for its partial
    content.
    """

    async def after_model_request(
        self, ctx: RunContext[AgentDepsT], *, request_context: ModelRequestContext, response: ModelResponse
    ) -> ModelResponse:
        """The response, unless the content filter stopped it.

        Raises:
            ContentFilterError: the response's `finish_reason` is `'content_filter'`.
        """
        if response.finish_reason == 'content_filter':
            raise content_filter_error(response)
        return response


def content_filter_error(response: ModelResponse) -> ContentFilterError:
    """The error for a response the content filter stopped: the provider's reason in the message (its finish
    reason, block reason or refusal, when it gave one), the response as JSON in the body."""
    details = response.provider_details or {}
    if reason := details.get('finish_reason'):
        message = f"Content filter triggered. Finish reason: '{reason}'"
    elif reason := details.get('block_reason'):
        message = f"Content filter triggered. Block reason: '{reason}'"
    elif refusal := details.get('refusal'):
        message = f'Content filter triggered. Refusal: {refusal!r}'
    else:
        message = 'Content filter triggered.'
    return ContentFilterError(message, body=ModelMessagesTypeAdapter.dump_json([response], indent=2).decode())
