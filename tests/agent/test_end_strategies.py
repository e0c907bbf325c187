"""The end strategies as pydantic-ai 2.x has them: 'graceful' by default (the function tool calls beside a valid
output call run, in the order the model made them, and a retry one of them asks for keeps the output from ending
the run), 'exhaustive' (everything at once) and 'early' (the 1.x default)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from edgewise.agent import Agent, ModelRetry, ToolOutput
from edgewise.agent.messages import ModelRequest, RetryPromptPart, TextPart, ToolCallPart, ToolReturnPart
from edgewise.graph.persistence.sqlite import SqliteStatePersistence

from ._helpers import scripted

pytestmark = pytest.mark.anyio

RETRY_FIRST = 'Output not used as the final result - addressing tool retries from this round first.'


def _contents(message: Any) -> list[tuple[str, Any]]:
    return [(part.tool_call_id, part.content) for part in message.parts]


async def test_graceful_is_the_default_and_runs_the_calls_in_the_order_they_were_made() -> None:
    events: list[str] = []
    model = scripted(
        [ToolCallPart('note', {'text': 'before'}, 'c1'), ToolCallPart('final_result', {'response': 7}, 'c2'),
         ToolCallPart('note', {'text': 'after'}, 'c3'), ToolCallPart('final_result', {'response': 8}, 'c4')],
    )  # fmt: skip

    def answer(response: int) -> int:
        events.append(f'output {response}')
        return response

    agent = Agent(model, output_type=ToolOutput(answer, name='final_result'))
    assert agent.end_strategy == 'graceful'

    @agent.tool_plain
    def note(text: str) -> str:
        events.append(f'note {text}')
        return text

    result = await agent.run('go')
    assert result.output == 7
    # The call made before the output call ran before it; the later output call is skipped, not run.
    assert events == ['note before', 'output 7', 'note after']
    assert _contents(result.all_messages()[-1]) == [
        ('c1', 'before'),
        ('c2', 'Final result processed.'),
        ('c3', 'after'),
        ('c4', 'Output tool not used - a final result was already processed.'),
    ]


@pytest.mark.parametrize('strategy', ['graceful', 'exhaustive'])
async def test_a_function_tools_retry_keeps_the_output_from_ending_the_run(strategy: Any) -> None:
    model = scripted(
        [ToolCallPart('final_result', {'response': 1}, 'c1'), ToolCallPart('check', {'n': 0}, 'c2'),
         ToolCallPart('missing', {}, 'c3')],
        [ToolCallPart('final_result', {'response': 2}, 'c4')],
    )  # fmt: skip
    agent = Agent(model, output_type=int, end_strategy=strategy)

    @agent.tool_plain
    def check(n: int) -> str:
        raise ModelRetry('n must be positive')

    result = await agent.run('go')
    assert result.output == 2
    request = result.all_messages()[2]
    assert isinstance(request, ModelRequest)
    assert [type(p).__name__ for p in request.parts] == ['ToolReturnPart', 'RetryPromptPart', 'RetryPromptPart']
    returned = request.parts[0]
    assert isinstance(returned, ToolReturnPart)
    assert returned == ToolReturnPart('final_result', RETRY_FIRST, 'c1', timestamp=returned.timestamp)
    assert isinstance(request.parts[1], RetryPromptPart)
    assert request.parts[1].content == 'n must be positive'


async def test_an_unknown_tools_retry_does_not_keep_the_output_from_ending_the_run() -> None:
    model = scripted([ToolCallPart('final_result', {'response': 1}, 'c1'), ToolCallPart('missing', {}, 'c2')])
    agent = Agent(model, output_type=int)
    result = await agent.run('go')
    assert result.output == 1
    assert [type(p).__name__ for p in result.all_messages()[-1].parts] == ['ToolReturnPart', 'RetryPromptPart']


async def test_early_skips_the_function_tools_once_an_output_is_valid() -> None:
    model = scripted([ToolCallPart('note', {}, 'c1'), ToolCallPart('final_result', {'response': 1}, 'c2')])
    agent = Agent(model, output_type=int, end_strategy='early')

    @agent.tool_plain
    def note() -> str:  # pragma: no cover - skipped: the output is valid
        return 'noted'

    result = await agent.run('go')
    assert result.output == 1
    assert _contents(result.all_messages()[-1]) == [
        ('c2', 'Final result processed.'),
        ('c1', 'Tool not executed - a final result was already processed.'),
    ]


async def test_early_skips_unknown_tool_calls_like_the_function_tools_once_an_output_is_valid() -> None:
    model = scripted(
        [
            ToolCallPart('nope', {}, 'c1'),
            ToolCallPart('note', {}, 'c2'),
            ToolCallPart('final_result', {'response': 1}, 'c3'),
        ]
    )
    agent = Agent(model, output_type=int, end_strategy='early')

    @agent.tool_plain
    def note() -> str:  # pragma: no cover - skipped: the output is valid
        return 'noted'

    result = await agent.run('go')

    skipped = 'Tool not executed - a final result was already processed.'
    assert (result.output, _contents(result.all_messages()[-1])) == (
        1,
        [('c3', 'Final result processed.'), ('c1', skipped), ('c2', skipped)],
    )


async def test_early_answers_unknown_tool_calls_with_the_function_tools_when_no_output_is_valid() -> None:
    model = scripted(
        [ToolCallPart('nope', {}, 'c1'), ToolCallPart('final_result', {'response': 'x'}, 'c2')],
        [ToolCallPart('final_result', {'response': 2}, 'c3')],
    )
    agent = Agent(model, output_type=int, end_strategy='early')

    result = await agent.run('go')

    retried = result.all_messages()[2]
    assert (result.output, [type(part).__name__ for part in retried.parts]) == (
        2,
        ['RetryPromptPart', 'RetryPromptPart'],
    )
    assert [getattr(part, 'tool_call_id', None) for part in retried.parts] == ['c2', 'c1']


async def test_exhaustive_runs_the_function_tools_and_the_output_calls_at_the_same_time() -> None:
    started = anyio.Event()
    model = scripted(
        [ToolCallPart('final_result', {'response': 1}, 'c1'), ToolCallPart('signal', {}, 'c2'),
         ToolCallPart('final_result', {'response': 2}, 'c3')],
    )  # fmt: skip

    async def answer(response: int) -> int:
        await started.wait()  # set by the tool called after this call: only reached when both run at once
        return response

    agent = Agent[None, int](model, output_type=ToolOutput(answer, name='final_result'), end_strategy='exhaustive')

    @agent.tool_plain
    async def signal() -> str:
        started.set()
        return 'sent'

    with anyio.fail_after(30):  # a hang (the calls run one after another) fails instead of blocking the suite
        result = await agent.run('go')
    assert result.output == 1
    assert _contents(result.all_messages()[-1]) == [
        ('c1', 'Final result processed.'),
        ('c2', 'sent'),
        ('c3', 'Output tool processed, but its value will not be the final result of the agent run.'),
    ]


@pytest.mark.parametrize('where', ['tool', 'output'])
async def test_exhaustive_an_error_in_one_call_stops_the_others_and_is_raised_as_is(where: str) -> None:
    model = scripted([ToolCallPart('final_result', {'response': 1}, 'c1'), ToolCallPart('boom', {}, 'c2')])

    async def answer(response: int) -> int:
        if where == 'output':
            raise RuntimeError('output broke')
        await anyio.sleep_forever()  # cancelled by the tool's failure
        raise AssertionError  # pragma: no cover

    agent = Agent[None, int](model, output_type=ToolOutput(answer, name='final_result'), end_strategy='exhaustive')

    @agent.tool_plain
    async def boom() -> str:
        if where == 'tool':
            raise RuntimeError('tool broke')
        await anyio.sleep_forever()  # cancelled by the output's failure
        raise AssertionError  # pragma: no cover

    with pytest.raises(RuntimeError, match=f'{where} broke'):
        await agent.run('go')


async def test_a_durable_graceful_step_checkpoints_the_calls_made_before_the_output_call(tmp_path: Path) -> None:
    model = scripted(
        [ToolCallPart('work', {'n': 1}, 'c1'), ToolCallPart('final_result', {'response': 1}, 'c2')],
    )
    agent = Agent(model, output_type=int)

    @agent.tool_plain
    def work(n: int) -> int:
        return n

    async with SqliteStatePersistence(tmp_path / 'runs.db', 'r') as persistence:
        result = await agent.run('go', persistence=persistence)
        raw = await persistence.load_raw()
    assert result.output == 1
    # The one call before the output call is checkpointed: the output call is processed before the next snapshot.
    assert max(len(s.state['step_results']) for s in raw) == 1


async def test_text_beside_a_retried_function_tool_call_still_goes_on() -> None:
    model = scripted([TextPart('thinking'), ToolCallPart('check', {}, 'c1')], [TextPart('done')])
    agent = Agent(model)
    tries: list[int] = []

    @agent.tool_plain
    def check() -> str:
        tries.append(1)
        return 'ok'

    result = await agent.run('go')
    assert result.output == 'done'
    assert tries == [1]


async def test_a_sequential_tool_is_a_barrier_and_the_others_still_run_together() -> None:
    log: list[str] = []
    both = anyio.Event()
    first_in = anyio.Event()
    model = scripted(
        [ToolCallPart('fetch', {'n': 1}, 'c1'), ToolCallPart('fetch', {'n': 2}, 'c2'),
         ToolCallPart('write', {}, 'c3'), ToolCallPart('fetch', {'n': 3}, 'c4')],
        [TextPart('done')],
    )  # fmt: skip
    agent = Agent(model)

    @agent.tool_plain
    async def fetch(n: int) -> int:
        log.append(f'fetch {n} starts')
        if n == 1:
            first_in.set()
            await both.wait()  # set by fetch 2: the two calls before the barrier run at the same time
        elif n == 2:
            await first_in.wait()
            both.set()
        log.append(f'fetch {n} ends')
        return n

    @agent.tool_plain(sequential=True)
    async def write() -> str:
        log.append('write')
        return 'written'

    with anyio.fail_after(30):  # a hang (fetch 1 and 2 one after another) fails instead of blocking the suite
        result = await agent.run('go')
    assert result.output == 'done'
    assert log.index('write') > max(log.index('fetch 1 ends'), log.index('fetch 2 ends'))
    assert log.index('fetch 3 starts') > log.index('write')
    assert _contents(result.all_messages()[2]) == [('c1', 1), ('c2', 2), ('c3', 'written'), ('c4', 3)]


@pytest.mark.parametrize('strategy', ['exhaustive', 'graceful'])
async def test_a_sequential_output_tool_waits_for_the_calls_made_before_it(strategy: Any) -> None:
    log: list[str] = []
    model = scripted([ToolCallPart('note', {}, 'c1'), ToolCallPart('final_result', {'response': 5}, 'c2')])

    def answer(response: int) -> int:
        log.append('output')
        return response

    agent = Agent(model, output_type=ToolOutput(answer, name='final_result', sequential=True), end_strategy=strategy)

    @agent.tool_plain
    async def note() -> str:
        await anyio.lowlevel.checkpoint()
        log.append('note')
        return 'noted'

    result = await agent.run('go')
    assert result.output == 5
    assert log == ['note', 'output']


async def test_under_the_sequential_mode_every_call_runs_alone() -> None:
    log: list[str] = []
    model = scripted([ToolCallPart('step', {'n': 1}, 'c1'), ToolCallPart('step', {'n': 2}, 'c2')], [TextPart('ok')])
    agent = Agent(model)

    @agent.tool_plain
    async def step(n: int) -> int:
        log.append(f'{n} starts')
        await anyio.lowlevel.checkpoint()
        log.append(f'{n} ends')
        return n

    with agent.parallel_tool_call_execution_mode('sequential'):
        assert (await agent.run('go')).output == 'ok'
    assert log == ['1 starts', '1 ends', '2 starts', '2 ends']


async def test_early_keeps_the_barriers_of_the_function_tools_it_runs() -> None:
    log: list[str] = []
    model = scripted(
        [ToolCallPart('final_result', {'response': 'bad'}, 'c1'), ToolCallPart('one', {}, 'c2'),
         ToolCallPart('two', {}, 'c3')],
        [ToolCallPart('final_result', {'response': 1}, 'c4')],
    )  # fmt: skip
    agent = Agent(model, output_type=int, end_strategy='early')

    @agent.tool_plain(sequential=True)
    async def one() -> str:
        log.append('one')
        return 'a'

    @agent.tool_plain
    async def two() -> str:
        log.append('two')
        return 'b'

    assert (await agent.run('go')).output == 1
    assert log == ['one', 'two']


async def test_output_calls_give_only_the_output_tool_events() -> None:
    model = scripted(
        [ToolCallPart('final_result', {'response': 'bad'}, 'c1'), ToolCallPart('final_result', {'response': 2}, 'c2'),
         ToolCallPart('final_result', {'response': 3}, 'c3')],
    )  # fmt: skip
    agent = Agent(model, output_type=int)
    kinds: list[tuple[str, str]] = []
    async with agent.iter('go') as run:
        async for node in run:
            if Agent.is_call_tools_node(node):
                async with node.stream(run.ctx) as events:
                    async for event in events:
                        kinds.append((type(event).__name__, getattr(event, 'tool_call_id', '')))
    assert run.result is not None
    assert run.result.output == 2
    # The invalid and the skipped output calls give no function tool events (pydantic-ai 2.x).
    assert kinds == [
        ('OutputToolCallEvent', 'c1'), ('OutputToolResultEvent', 'c1'),
        ('OutputToolCallEvent', 'c2'), ('OutputToolResultEvent', 'c2'),
        ('OutputToolCallEvent', 'c3'), ('OutputToolResultEvent', 'c3'),
    ]  # fmt: skip
