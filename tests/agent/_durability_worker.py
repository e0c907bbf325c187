"""An agent made durable by the `EdgewiseDurability` capability, run in a process of its own by
tests/agent/test_durability_capability.py.

    python -m tests.agent._durability_worker DB_PATH LOG_PATH KILL_AT BACKEND

The run calls the `work` tool twice in two model responses; each call appends `start <id>` and `end <id>` to
the log, and the process SIGKILLs itself inside the call whose id is `KILL_AT` (after its `start` line), so it
dies mid-tool-call by construction. The run's id is logged first, for the test to resume it.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

import anyio

from edgewise.agent import Agent, RunContext
from edgewise.agent.capabilities import EdgewiseDurability
from edgewise.agent.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from edgewise.agent.models.function import AgentInfo, FunctionModel


def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    responses = sum(isinstance(m, ModelResponse) for m in messages)
    if responses < 2:
        return ModelResponse([ToolCallPart('work', {'n': responses + 1}, f'call-{responses + 1}')])
    returns = [
        int(p.model_response_str())
        for m in messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, ToolReturnPart)
    ]
    return ModelResponse([TextPart(f'total {sum(map(int, returns))}')])


def make_agent(db: str, log: str, kill_at: str) -> Agent[None, str]:
    agent = Agent(FunctionModel(answer), capabilities=[EdgewiseDurability(f'sqlite:///{db}')])

    @agent.tool
    def work(ctx: RunContext[None], n: int) -> int:
        """Do some work.

        Args:
            n: Which work.
        """
        with open(log, 'a') as file:
            file.write(f'run {ctx.run_id}\nstart {ctx.tool_call_id}\n')
        if ctx.tool_call_id == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        with open(log, 'a') as file:
            file.write(f'end {ctx.tool_call_id}\n')
        return n * 10

    return agent


async def main(db: str, log: str, kill_at: str) -> Any:
    return (await make_agent(db, log, kill_at).run('go')).output


if __name__ == '__main__':
    db, log, kill_at, backend = sys.argv[1:5]
    print(anyio.run(main, db, log, kill_at, backend=backend))
