"""Plausible token counts for test models, from the words of the conversation (no tokenizer).

The counts are cumulative over the whole conversation (as a provider bills a request), but computed
incrementally: a run's history only grows, so each request counts the new messages only.
"""

from __future__ import annotations as _annotations

import re
from collections import OrderedDict
from collections.abc import Iterable, Sequence

from .._messages.usage_counts import RequestUsage
from ..messages import (
    BinaryContent,
    CompactionPart,
    FilePart,
    InstructionDeltaPart,
    ModelMessage,
    ModelRequest,
    NativeToolReturnPart,
    RetryPromptPart,
    SpeechPart,
    SystemPromptPart,
    TextContent,
    TextPart,
    ThinkingPart,
    ToolAvailabilityDeltaPart,
    ToolReturnPart,
    UserContent,
    UserPromptPart,
)

__all__ = ('REQUEST_OVERHEAD', 'UsageEstimator', 'estimate_tokens', 'estimate_usage')

_SPLIT_RE = re.compile(r'[\s",.:]+')
# Providers bill a fixed overhead of roughly this many tokens per request.
REQUEST_OVERHEAD = 50
_CACHE_SIZE = 16


def estimate_tokens(content: str | Sequence[UserContent]) -> int:
    """Roughly how many tokens `content` is: its words and punctuation-separated pieces, one per byte of
    binary data (file URLs count nothing, as in pydantic-ai)."""
    if not content:
        return 0
    if isinstance(content, str):
        return len(_SPLIT_RE.split(content.strip()))
    tokens = 0
    for item in content:
        if isinstance(item, str | TextContent):
            text = item if isinstance(item, str) else item.content
            tokens += len(_SPLIT_RE.split(text.strip()))
        elif isinstance(item, BinaryContent):
            tokens += len(item.data)
    return tokens


def _message_tokens(message: ModelMessage) -> tuple[int, int]:
    request_tokens = response_tokens = 0
    if isinstance(message, ModelRequest):
        for part in message.parts:
            if isinstance(part, SystemPromptPart | UserPromptPart):
                request_tokens += estimate_tokens(part.content)
            elif isinstance(part, ToolReturnPart):
                request_tokens += estimate_tokens(part.model_response_str())
            elif isinstance(part, SpeechPart):  # a direct request, not prepared: its transcript counts as text
                request_tokens += estimate_tokens(part.content)
            elif isinstance(part, RetryPromptPart):
                request_tokens += estimate_tokens(part.model_response())
            elif isinstance(part, ToolAvailabilityDeltaPart):  # not announced yet: the names it reveals
                request_tokens += estimate_tokens(' '.join(part.tools_added))
            elif isinstance(part, InstructionDeltaPart):  # not projected yet: the change as it reads
                request_tokens += estimate_tokens(part.render())
            # the other records (baselines, capability loads, settings changes) are never sent
    else:
        for response_part in message.parts:
            if isinstance(response_part, TextPart | ThinkingPart | SpeechPart):
                response_tokens += estimate_tokens(response_part.content)
            elif isinstance(response_part, CompactionPart):
                continue  # the provider's summary, not the model's words
            elif isinstance(response_part, FilePart):
                response_tokens += estimate_tokens([response_part.content])
            elif isinstance(response_part, NativeToolReturnPart):
                response_tokens += estimate_tokens(response_part.model_response_str())
            else:
                response_tokens += 1 + estimate_tokens(response_part.args_as_json_str())
    return request_tokens, response_tokens


class UsageEstimator:
    """Estimates the usage of a request, remembering the totals of the last few conversations it saw."""

    def __init__(self) -> None:
        # id(list) -> (messages counted, last message counted, request tokens, response tokens)
        self._seen: OrderedDict[int, tuple[int, ModelMessage | None, int, int]] = OrderedDict()

    def estimate(self, messages: Sequence[ModelMessage], extra: ModelMessage) -> RequestUsage:
        """The estimated usage of a request with `messages`, answered by `extra`."""
        key = id(messages)
        counted, last, request_tokens, response_tokens = self._seen.pop(key, (0, None, 0, 0))
        # The same list object may have been rewritten in place: start over unless the prefix is intact.
        if counted > len(messages) or (counted and messages[counted - 1] is not last):
            counted, request_tokens, response_tokens = 0, 0, 0
        for message in messages[counted:]:
            req, resp = _message_tokens(message)
            request_tokens += req
            response_tokens += resp
        self._seen[key] = (len(messages), messages[-1] if messages else None, request_tokens, response_tokens)
        if len(self._seen) > _CACHE_SIZE:
            self._seen.popitem(last=False)
        req, resp = _message_tokens(extra)
        return RequestUsage(input_tokens=REQUEST_OVERHEAD + request_tokens + req, output_tokens=response_tokens + resp)


def estimate_usage(messages: Iterable[ModelMessage]) -> RequestUsage:
    """The estimated usage of a request that sent `messages` (requests count as input, responses as output)."""
    request_tokens, response_tokens = REQUEST_OVERHEAD, 0
    for message in messages:
        req, resp = _message_tokens(message)
        request_tokens += req
        response_tokens += resp
    return RequestUsage(input_tokens=request_tokens, output_tokens=response_tokens)
