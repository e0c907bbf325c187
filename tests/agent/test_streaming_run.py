"""`Agent.run_stream`: streamed text, partial outputs, responses; runs that go on after text and output calls."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from inline_snapshot import snapshot
from pydantic import BaseModel

from edgewise.agent import (
    Agent,
    ModelRequest,
    ModelResponse,
    ModelRetry,
    PromptedOutput,
    RequestUsage,
    RunContext,
    RunUsage,
    UnexpectedModelBehavior,
    UserError,
)
from edgewise.agent.messages import TextPart, ToolCallPart, ToolReturnPart, UserPromptPart
from edgewise.agent.models.function import DeltaToolCall
from edgewise.agent.models.test import TestModel

from ._helpers import CONVERSATION_ID, NOW, RUN_ID
from ._streaming_helpers import streamed

pytestmark = pytest.mark.anyio


class Item(BaseModel):
    name: str
    qty: int = 1


class Basket(BaseModel):
    owner: str
    items: list[Item]


def _call(name: str | None, args: str, call_id: str | None = None, index: int = 0) -> dict[int, DeltaToolCall]:
    return {index: DeltaToolCall(name=name, json_args=args, tool_call_id=call_id)}


async def test_text_streams_chunk_by_chunk_and_is_the_output() -> None:
    agent = Agent(streamed(['Hello', ', ', 'world']))
    async with agent.run_stream('hi') as result:
        assert not result.is_complete
        texts = [text async for text in result.stream_text(debounce_by=None)]
        assert result.is_complete
        assert await result.get_output() == 'Hello, world'
    assert texts == ['Hello', 'Hello, ', 'Hello, world']
    assert [type(m).__name__ for m in result.all_messages()] == ['ModelRequest', 'ModelResponse']
    assert result.usage == snapshot(RunUsage(input_tokens=50, output_tokens=4, requests=1))
    assert repr(result).endswith('_on_complete=None, _run_result=None, is_complete=True)')


async def test_text_deltas_are_the_pieces_as_they_come() -> None:
    agent = Agent(streamed(['Hello', ', ', 'world']))
    async with agent.run_stream('hi') as result:
        assert [piece async for piece in result.stream_text(delta=True, debounce_by=None)] == ['Hello', ', ', 'world']


async def test_text_then_tool_calls_runs_the_tools_and_streams_the_next_response_to_the_real_output() -> None:
    agent = Agent(
        streamed(
            ['Let me ', 'check.', _call('add', '{"a": 1, ', 'c1'), _call(None, '"b": 2}')],
            ['The sum ', 'is 3.'],
        )
    )

    @agent.tool_plain
    def add(a: int, b: int) -> int:
        return a + b

    async with agent.run_stream('1 + 2?') as result:
        texts = [text async for text in result.stream_text(debounce_by=None)]
    assert texts == ['Let me ', 'Let me check.', 'The sum ', 'The sum is 3.']
    assert await result.get_output() == 'The sum is 3.'
    assert result.new_messages() == snapshot(
        [
            ModelRequest(
                parts=[
                    UserPromptPart(
                        content='1 + 2?',
                        timestamp=NOW,
                    )
                ],
                timestamp=NOW,
                run_id=RUN_ID,
                conversation_id=CONVERSATION_ID,
            ),
            ModelResponse(
                parts=[
                    TextPart(content='Let me check.'),
                    ToolCallPart(tool_name='add', args='{"a": 1, "b": 2}', tool_call_id='c1'),
                ],
                usage=RequestUsage(input_tokens=50, output_tokens=11),
                model_name='function::stream',
                timestamp=NOW,
                run_id=RUN_ID,
                conversation_id=CONVERSATION_ID,
            ),
            ModelRequest(
                parts=[
                    ToolReturnPart(
                        tool_name='add',
                        content=3,
                        tool_call_id='c1',
                        timestamp=NOW,
                    )
                ],
                timestamp=NOW,
                run_id=RUN_ID,
                conversation_id=CONVERSATION_ID,
            ),
            ModelResponse(
                parts=[TextPart(content='The sum is 3.')],
                usage=RequestUsage(input_tokens=50, output_tokens=5),
                model_name='function::stream',
                timestamp=NOW,
                run_id=RUN_ID,
                conversation_id=CONVERSATION_ID,
            ),
        ]
    )


async def test_whitespace_before_a_tool_call_never_ends_the_run() -> None:
    agent = Agent(streamed(['\n', ' ', _call('ping', '{}', 'c1')], ['pong']))

    @agent.tool_plain
    def ping() -> str:
        return 'ok'

    async with agent.run_stream('go') as result:
        assert await result.get_output() == 'pong'
    assert [type(p).__name__ for m in result.all_messages() for p in m.parts] == snapshot(
        ['UserPromptPart', 'TextPart', 'ToolCallPart', 'ToolReturnPart', 'TextPart']
    )


async def test_an_output_call_followed_by_tool_calls_skips_them_with_the_early_strategy() -> None:
    calls: list[str] = []
    agent = Agent(
        streamed([_call('final_result', '{"owner": "ann", "items": []}', 'c1'), _call('log', '{}', 'c2', index=1)]),
        output_type=Basket,
        end_strategy='early',
    )

    @agent.tool_plain
    def log() -> str:
        calls.append('log')  # pragma: no cover - skipped by the early end strategy
        return 'logged'  # pragma: no cover

    async with agent.run_stream('go') as result:
        assert await result.get_output() == Basket(owner='ann', items=[])
    assert calls == []
    assert result.all_messages()[-1].parts == snapshot(
        [
            ToolReturnPart(
                tool_name='final_result',
                content='Final result processed.',
                tool_call_id='c1',
                timestamp=NOW,
            ),
            ToolReturnPart(
                tool_name='log',
                content='Tool not executed - a final result was already processed.',
                tool_call_id='c2',
                timestamp=NOW,
            ),
        ]
    )


async def test_an_output_call_followed_by_tool_calls_runs_them_with_the_exhaustive_strategy() -> None:
    calls: list[str] = []
    agent = Agent(
        streamed([_call('final_result', '{"owner": "ann", "items": []}', 'c1'), _call('log', '{}', 'c2', index=1)]),
        output_type=Basket,
        end_strategy='exhaustive',
    )

    @agent.tool_plain
    def log() -> str:
        calls.append('log')
        return 'logged'

    async with agent.run_stream('go') as result:
        outputs = [output async for output in result.stream_output(debounce_by=None)]
    assert calls == ['log']
    assert outputs == snapshot([Basket(owner='ann', items=[]), Basket(owner='ann', items=[])])
    assert result.all_messages()[-1].parts == snapshot(
        [
            ToolReturnPart(
                tool_name='final_result',
                content='Final result processed.',
                tool_call_id='c1',
                timestamp=NOW,
            ),
            ToolReturnPart(
                tool_name='log',
                content='logged',
                tool_call_id='c2',
                timestamp=NOW,
            ),
        ]
    )


async def test_an_invalid_output_call_with_tool_calls_runs_them_and_the_stream_goes_on_to_the_next_response() -> None:
    agent = Agent(
        streamed(
            [_call('final_result', '{"owner": 5}', 'c1'), _call('stock', '{}', 'c2', index=1)],
            [_call('final_result', '{"owner": "bo", "items": [{"name": "tea", "qty": 2}]}', 'c3')],
        ),
        output_type=Basket,
    )

    @agent.tool_plain
    def stock() -> list[str]:
        return ['tea']

    async with agent.run_stream('go') as result:
        outputs = [output async for output in result.stream_output(debounce_by=None)]
    assert outputs == snapshot(
        [Basket(owner='bo', items=[Item(name='tea', qty=2)]), Basket(owner='bo', items=[Item(name='tea', qty=2)])]
    )
    assert [p.part_kind for p in result.all_messages()[2].parts] == ['retry-prompt', 'tool-return']


async def test_partial_outputs_of_a_nested_model_are_validated_chunk_by_chunk() -> None:
    text = '{"owner": "ann", "items": [{"name": "tea", "qty": 2}, {"name": "jam"}]}'
    chunks = [text[i : i + 9] for i in range(0, len(text), 9)]
    agent = Agent(streamed([_call('final_result', chunks[0], 'c1'), *(_call(None, c) for c in chunks[1:])]),
                  output_type=Basket)  # fmt: skip
    async with agent.run_stream('go') as result:
        outputs = [output async for output in result.stream_output(debounce_by=None)]
    assert outputs == snapshot(
        [
            Basket(owner='ann', items=[]),
            Basket(owner='ann', items=[Item(name='tea')]),
            Basket(owner='ann', items=[Item(name='tea', qty=2)]),
            Basket(owner='ann', items=[Item(name='tea', qty=2), Item(name='jam')]),
            Basket(owner='ann', items=[Item(name='tea', qty=2), Item(name='jam')]),
        ]
    )
    assert outputs[-1] == await result.get_output()


async def test_output_validators_see_partial_values_and_know_it() -> None:
    text = '{"owner": "ann", "items": [{"name": "tea"}]}'
    agent = Agent(streamed([_call('final_result', text[:27], 'c1'), _call(None, text[27:])]), output_type=Basket)
    seen: list[tuple[bool, int]] = []

    @agent.output_validator
    def check(ctx: RunContext[None], output: Basket) -> Basket:
        seen.append((ctx.partial_output, len(output.items)))
        if ctx.partial_output and not output.items:
            raise ModelRetry('not yet')  # a partial value rejected by a validator is skipped
        return output

    async with agent.run_stream('go') as result:
        outputs = [output async for output in result.stream_output(debounce_by=None)]
    assert seen == snapshot([(True, 0), (True, 1), (False, 1)])
    assert outputs == [Basket(owner='ann', items=[Item(name='tea')])] * 2  # the partial value, then the output


async def test_a_list_output_is_streamed_item_by_item() -> None:
    agent = Agent(
        streamed([_call('final_result', '{"response": [{"name": "a"}, ', 'c1'), _call(None, '{"name": "b"}]}')]),
        output_type=list[Item],
    )
    async with agent.run_stream('go') as result:
        assert [output async for output in result.stream_output(debounce_by=None)] == snapshot(
            [[Item(name='a')], [Item(name='a'), Item(name='b')], [Item(name='a'), Item(name='b')]]
        )


async def test_prompted_output_is_parsed_from_the_streamed_text() -> None:
    agent = Agent(streamed(['{"owner": "cy", "items": [', '{"name": "x"}]}']), output_type=PromptedOutput(Basket))
    async with agent.run_stream('go') as result:
        assert [output async for output in result.stream_output(debounce_by=None)] == snapshot(
            [
                Basket(owner='cy', items=[]),
                Basket(owner='cy', items=[Item(name='x')]),
                Basket(owner='cy', items=[Item(name='x')]),
            ]
        )


async def test_stream_output_of_text_yields_the_text_so_far_then_the_output_even_when_equal() -> None:
    agent = Agent(streamed(['a', 'b']))
    async with agent.run_stream('go') as result:
        assert [output async for output in result.stream_output(debounce_by=None)] == ['a', 'ab', 'ab']


async def test_stream_text_of_a_structured_output_is_a_user_error() -> None:
    agent = Agent(TestModel(), output_type=Basket)
    async with agent.run_stream('go') as result:
        with pytest.raises(UserError, match=r'stream_text\(\) can only be used with text responses'):
            async for _ in result.stream_text():
                pass  # pragma: no cover


async def test_stream_response_rebuilds_the_response_on_each_event_then_gives_the_complete_one() -> None:
    agent = Agent(streamed(['a', 'b']))
    async with agent.run_stream('go') as result:
        responses = [r async for r in result.stream_response(debounce_by=None)]
    async with Agent(streamed(['a', 'b'])).run_stream('go') as debounced:
        assert [r.parts async for r in debounced.stream_response(debounce_by=3600)] == [
            [TextPart('ab')],  # the one group of snapshots
            [TextPart('ab')],  # the complete response
        ]
    assert [(r.parts, r.state) for r in responses] == snapshot(
        [([TextPart(content='a')], 'incomplete'), ([TextPart(content='ab')], 'incomplete'),
         ([TextPart(content='ab')], 'incomplete'), ([TextPart(content='ab')], 'complete')]
    )  # fmt: skip
    # The last is the response as the run recorded it: `result.response` (as received) with the run's ids.
    assert responses[-1] == dataclasses.replace(
        result.response, run_id=result.run_id, conversation_id=result.conversation_id
    )


async def test_stream_responses_gives_pairs_of_response_and_is_last_with_a_deprecation_warning() -> None:
    async with Agent(streamed(['a', 'b'])).run_stream('go') as result:
        with pytest.warns(DeprecationWarning, match='use `stream_response\\(\\)`'):
            pairs = result.stream_responses(debounce_by=None)
        assert [(r.text, last) async for r, last in pairs] == [('a', False), ('ab', False), ('ab', False), ('ab', True)]


async def test_debouncing_groups_the_values_of_each_interval() -> None:
    agent = Agent(streamed(['a', 'b', 'c', 'd']))
    async with agent.run_stream('go') as result:
        # An hour-long interval: every chunk falls in the first group, yielded (joined) at the end.
        assert [piece async for piece in result.stream_text(delta=True, debounce_by=3600)] == ['abcd']
    async with Agent(streamed(['a', 'b', 'c'])).run_stream('go') as result:
        assert [text async for text in result.stream_text(debounce_by=3600)] == ['abc']
    async with Agent(streamed(['a', 'b', 'c'])).run_stream('go') as result:
        # An empty interval: each chunk is a group of its own.
        assert [text async for text in result.stream_text(debounce_by=0)] == ['a', 'ab', 'abc']


async def test_messages_of_a_finished_stream_match_a_plain_run() -> None:
    agent = Agent(streamed([_call('final_result', '{"owner": "d", "items": []}', 'c1')]), output_type=Basket)
    async with agent.run_stream('go', message_history=[]) as result:
        with pytest.raises(UserError, match='The run is not complete yet'):
            result.all_messages(output_tool_return_content='x')
        await result.get_output()
    assert result.new_messages_json() == result.all_messages_json()
    replaced: Any = result.new_messages(output_tool_return_content='thanks')[-1]
    assert replaced.parts[0].content == 'thanks'


async def test_a_run_that_fails_raises_from_the_stream_and_keeps_whole_messages() -> None:
    bad = [_call('final_result', '{"owner": 1}', 'c1')]
    agent = Agent(streamed(bad, bad), output_type=Basket)
    async with agent.run_stream('go') as result:
        with pytest.raises(UnexpectedModelBehavior, match=r'Exceeded maximum output retries \(1\)'):
            await result.get_output()
    assert [m.kind for m in result.all_messages()] == ['request', 'response', 'request', 'response']
    assert not result.is_complete


async def test_a_stream_left_half_read_can_be_followed_by_get_output() -> None:
    agent = Agent(streamed(['a', 'b', 'c']))
    async with agent.run_stream('go') as result:
        async for text in result.stream_text(delta=True, debounce_by=None):
            assert text == 'a'
            break
        assert await result.get_output() == 'abc'
        # once the run is over, a new stream gives its output, once (as pydantic-ai's cached output)
        assert [text async for text in result.stream_text(debounce_by=None)] == ['abc']
