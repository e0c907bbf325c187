"""Plausible token counts for test models, from the words of the conversation (no tokenizer).

The counts are cumulative over the whole conversation (as a provider bills a request), but computed
incrementally: a run's history only grows, so each request counts the new messages only.
"""

from __future__ import annotations as _annotations

import functools
import re
from collections import OrderedDict
from collections.abc import Iterable, Sequence

from .._messages.usage_counts import RequestUsage, token_usage
from ..messages import (
    BinaryContent,
    CompactionPart,
    FilePart,
    InstructionDeltaPart,
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponsePart,
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
_MEMO_LENGTH = 200  # the longest text whose count is remembered


def estimate_tokens(content: str | Sequence[UserContent]) -> int:
    """Roughly how many tokens `content` is: its words and punctuation-separated pieces, one per byte of
    binary data (file URLs count nothing, as in pydantic-ai)."""
    if not content:
        return 0
    if isinstance(content, str):
        return 1 if content.isalnum() else _word_count(content)  # (a single word, as `_word_count` counts it)
    tokens = 0
    for item in content:
        if isinstance(item, str | TextContent):
            text = item if isinstance(item, str) else item.content
            tokens += _word_count(text)
        elif isinstance(item, BinaryContent):
            tokens += len(item.data)
    return tokens


def _word_count(text: str) -> int:
    # A single word (a prompt such as 'hi') has no separator and no whitespace to strip: one token, without the
    # regular expression (`str.isalnum` is true of no character that `\s` or the punctuation matches). A short text is
    # counted once: a test model's answers and a test's prompts repeat.
    if text.isalnum():
        return 1
    if len(text) <= _MEMO_LENGTH:
        return _short_word_count(text)
    return len(_SPLIT_RE.split(text.strip()))


@functools.lru_cache(maxsize=256)
def _short_word_count(text: str) -> int:
    return len(_SPLIT_RE.split(text.strip()))


def _message_tokens(message: ModelMessage) -> tuple[int, int]:
    if isinstance(message, ModelRequest):
        return _request_tokens(message.parts), 0
    return 0, _response_tokens(message.parts)


def _request_tokens(parts: Sequence[ModelRequestPart]) -> int:
    tokens = 0
    for part in parts:
        if isinstance(part, SystemPromptPart | UserPromptPart):
            tokens += estimate_tokens(part.content)
        elif isinstance(part, ToolReturnPart):
            tokens += estimate_tokens(part.model_response_str())
        elif isinstance(part, SpeechPart):  # a direct request, not prepared: its transcript counts as text
            tokens += estimate_tokens(part.content)
        elif isinstance(part, RetryPromptPart):
            tokens += estimate_tokens(part.model_response())
        elif isinstance(part, ToolAvailabilityDeltaPart):  # not announced yet: the names it reveals
            tokens += estimate_tokens(' '.join(part.tools_added))
        elif isinstance(part, InstructionDeltaPart):  # not projected yet: the change as it reads
            tokens += estimate_tokens(part.render())
        # the other records (baselines, capability loads, settings changes) are never sent
    return tokens


def _response_tokens(parts: Sequence[ModelResponsePart]) -> int:
    tokens = 0
    for part in parts:
        if isinstance(part, TextPart | ThinkingPart | SpeechPart):
            tokens += estimate_tokens(part.content)
        elif isinstance(part, CompactionPart):
            continue  # the provider's summary, not the model's words
        elif isinstance(part, FilePart):
            tokens += estimate_tokens([part.content])
        elif isinstance(part, NativeToolReturnPart):
            tokens += estimate_tokens(part.model_response_str())
        else:
            tokens += 1 + estimate_tokens(part.args_as_json_str())
    return tokens


class UsageEstimator:
    """Estimates the usage of a request, remembering the totals of the last few conversations it saw."""

    def __init__(self) -> None:
        # id(list) -> (messages counted, last message counted, request tokens, response tokens), the conversation
        # seen last at the end (one seen again is taken out and put back). An `OrderedDict`: its `popitem` drops the
        # oldest in one step, where threads sharing the model (and so the estimator) could both pick the same key.
        self._seen: OrderedDict[int, tuple[int, ModelMessage | None, int, int]] = OrderedDict()

    def estimate(self, messages: Sequence[ModelMessage], extra: ModelMessage) -> RequestUsage:
        """The estimated usage of a request with `messages`, answered by `extra`."""
        request_tokens, response_tokens = _message_tokens(extra)
        return self._estimate(messages, request_tokens, response_tokens)

    def estimate_answer(self, messages: Sequence[ModelMessage], parts: Sequence[ModelResponsePart]) -> RequestUsage:
        """`estimate(messages, ModelResponse(parts=parts))`, before the response is made (so that it is made with
        its usage)."""
        return self._estimate(messages, 0, _response_tokens(parts))

    def _estimate(self, messages: Sequence[ModelMessage], extra_request: int, extra_response: int) -> RequestUsage:
        seen = self._seen
        key = id(messages)
        counted, last, request_tokens, response_tokens = seen.pop(key, (0, None, 0, 0))
        # The same list object may have been rewritten in place: start over unless the prefix is intact.
        if counted > len(messages) or (counted and messages[counted - 1] is not last):
            counted, request_tokens, response_tokens = 0, 0, 0
        for message in messages[counted:]:
            if isinstance(message, ModelRequest):
                request_tokens += _request_tokens(message.parts)
            else:
                response_tokens += _response_tokens(message.parts)
        seen[key] = (len(messages), messages[-1] if messages else None, request_tokens, response_tokens)
        if len(seen) > _CACHE_SIZE:
            seen.popitem(last=False)  # the conversation seen longest ago
        return token_usage(REQUEST_OVERHEAD + request_tokens + extra_request, response_tokens + extra_response)


def estimate_usage(messages: Iterable[ModelMessage]) -> RequestUsage:
    """The estimated usage of a request that sent `messages` (requests count as input, responses as output)."""
    request_tokens, response_tokens = REQUEST_OVERHEAD, 0
    for message in messages:
        req, resp = _message_tokens(message)
        request_tokens += req
        response_tokens += resp
    return RequestUsage(input_tokens=request_tokens, output_tokens=response_tokens)
