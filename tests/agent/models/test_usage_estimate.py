"""The usage test models estimate: the shortcuts of the word count and of the estimate count as the rules do."""

from __future__ import annotations

import re
from typing import Any, cast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from edgewise.agent._loop.call_tools_parts import answer_text
from edgewise.agent._loop.empty_response import no_output_answer
from edgewise.agent._messages.usage_counts import token_usage
from edgewise.agent.messages import (
    BinaryImage,
    CompactionPart,
    FilePart,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    ModelResponsePart,
    SpeechPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from edgewise.agent.models._usage_estimate import UsageEstimator, estimate_tokens
from edgewise.agent.usage import RequestUsage, RunUsage

_SPLIT = re.compile(r'[\s",.:]+')


def _regex_count(text: str) -> int:
    return len(_SPLIT.split(text.strip())) if text else 0


@given(st.text(alphabet=st.sampled_from(['a', 'Z', '7', 'é', '٣', ' ', '\u00a0', '\t', '"', ',', '.', ':', '-', '\n'])))
def test_word_counts_are_the_split_counts(text: str) -> None:
    assert estimate_tokens(text) == _regex_count(text)
    assert estimate_tokens(text) == _regex_count(text)  # counted again: remembered when short
    assert estimate_tokens([text]) == len(_SPLIT.split(text.strip()))  # a list's empty text counts one


@given(st.text())
def test_word_counts_of_any_text_are_the_split_counts(text: str) -> None:
    assert estimate_tokens(text) == _regex_count(text)
    long_text = text * 50 + ' end'  # past the length of the texts whose count is remembered
    assert estimate_tokens(long_text) == _regex_count(long_text)


def test_a_single_word_is_one_token_without_the_split() -> None:
    assert estimate_tokens('hi') == 1
    assert estimate_tokens('naïve42') == 1
    assert estimate_tokens('hi there') == 2
    assert estimate_tokens(' hi ') == 1


def test_token_usage_is_the_request_usage_of_its_counts() -> None:
    usage = token_usage(53, 4)
    expected = RequestUsage(input_tokens=53, output_tokens=4)
    assert usage == expected
    assert type(usage) is RequestUsage
    assert list(vars(usage).items()) == list(vars(expected).items())
    assert repr(usage) == repr(expected)
    assert usage.details is not token_usage(53, 4).details  # each its own
    run = RunUsage()
    run.incr(usage)
    assert run == RunUsage(requests=1, input_tokens=53, output_tokens=4)


_ANSWERS: list[list[ModelResponsePart]] = [
    [],
    [TextPart('success (no tool calls)')],
    [TextPart('one'), ThinkingPart('two three')],
    [ToolCallPart('get', {'a': 1}, tool_call_id='c1')],
    [FilePart(BinaryImage(b'\x89PNG', media_type='image/png'))],
]


# (input, output) tokens of each request of the growing conversation below, answered by each answer: the figures
# the estimate gave before `estimate_answer` existed (from the response's messages, one by one).
_EXPECTED = [
    [(52, 0), (52, 1), (57, 1)],
    [(52, 4), (52, 5), (57, 5)],
    [(52, 3), (52, 4), (57, 4)],
    [(52, 4), (52, 5), (57, 5)],
    [(52, 4), (52, 5), (57, 5)],
]


@pytest.mark.parametrize(('parts', 'expected'), list(zip(_ANSWERS, _EXPECTED, strict=True)))
def test_the_estimate_of_an_answer_is_that_of_its_response(
    parts: list[ModelResponsePart], expected: list[tuple[int, int]]
) -> None:
    history: list[ModelMessage] = [
        ModelRequest([UserPromptPart('hi there')]),
        ModelResponse([TextPart('hello')]),
        ModelRequest([ToolReturnPart('get', {'x': 'y z'}, tool_call_id='c1')]),
    ]
    by_answer, by_response = UsageEstimator(), UsageEstimator()
    for count in range(1, len(history) + 1):  # each request of a growing conversation
        sent = history[:count]
        usage = by_answer.estimate_answer(sent, parts)
        assert usage == by_response.estimate(sent, ModelResponse(parts=list(parts)))
        assert (usage.input_tokens, usage.output_tokens) == expected[count - 1]


@pytest.mark.parametrize(
    'parts',
    [
        [],
        [TextPart('')],
        [TextPart('answer')],
        [ThinkingPart('hmm'), TextPart('')],
        [ThinkingPart('hmm'), TextPart('answer')],
        [FilePart(BinaryImage(b'\x89PNG', media_type='image/png'))],
        [SpeechPart(speaker='assistant', transcript='spoken')],
        [SpeechPart(speaker='assistant')],
        [CompactionPart(content='summary')],
    ],
)
def test_a_response_with_text_has_something_to_act_on(parts: list[ModelResponsePart]) -> None:
    # `CallToolsNode` asks `no_output_answer` only of a response without text: with text, it has no answer to give.
    response = ModelResponse(parts=parts)
    if answer_text(response):
        assert no_output_answer(response, cast(Any, None)) is None
