"""An agent chatted with through `Agent.to_cli()` in a process of its own, by tests/agent/test_agent_cli_268.py.

    python -m tests.agent._chat_worker async asyncio|trio   # `await agent.to_cli(...)` on that backend
    python -m tests.agent._chat_worker async asyncio no-banner  # the same with `BANNER_ENABLED = False`
    python -m tests.agent._chat_worker sync                 # `agent.to_cli_sync(...)` with every option set
    python -m tests.agent._chat_worker no-rich              # as if rich were not installed

The model streams an answer naming the prompt, the instructions it got, its settings and how many requests the
history holds; a prompt holding `tool` makes it call the `lookup` tool first (saying so when it also holds
`first`), one holding `fail` makes it fail.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from functools import partial

import anyio

from edgewise.agent import Agent, RunContext
from edgewise.agent.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, UserPromptPart
from edgewise.agent.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from edgewise.agent.usage import UsageLimits


def _streaming(name: str) -> FunctionModel:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        last = messages[-1].parts[-1]
        prompt = last.content if isinstance(last, UserPromptPart) else None
        if isinstance(prompt, str) and 'tool' in prompt:
            if 'first' in prompt:
                yield 'Looking it up.'
            yield {0: DeltaToolCall('lookup', '{}', tool_call_id='call-1')}
            return
        if isinstance(prompt, str) and 'fail' in prompt:
            raise RuntimeError('the model is down') from ConnectionError('no route to the model')
        requests = sum(isinstance(message, ModelRequest) for message in messages)
        yield f'# {name}\n\n'
        yield f'prompt={prompt!r} instructions={info.instructions!r} '
        yield f'settings={info.model_settings!r} requests={requests}'

    return FunctionModel(stream_function=stream, model_name=name)


agent = Agent(_streaming('main'), deps_type=str)


@agent.instructions
def who(ctx: RunContext[str]) -> str:
    return f'Talking to {ctx.deps}.'


@agent.tool_plain
def lookup() -> str:
    return 'found'


def main(mode: str, *args: str) -> None:
    if mode == 'async':
        if args[1:] == ('no-banner',):
            import edgewise.agent

            edgewise.agent.BANNER_ENABLED = False
        anyio.run(partial(agent.to_cli, 'ann', prog_name='chat'), backend=args[0])
    elif mode == 'sync':
        history: list[ModelMessage] = [
            ModelRequest([UserPromptPart('earlier')]),
            ModelResponse([TextPart('earlier answer')]),
        ]
        agent.to_cli_sync(
            deps='bob',
            prog_name='mine',
            message_history=history,
            model_settings={'temperature': 0.5},
            usage_limits=UsageLimits(request_limit=1),
            model=_streaming('other'),
        )
    else:
        sys.modules['rich'] = None  # type: ignore[assignment]  # what an import finds when rich is missing
        agent.to_cli_sync()


if __name__ == '__main__':
    main(*sys.argv[1:])
