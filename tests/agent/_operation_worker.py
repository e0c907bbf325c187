"""A durable agent whose capability journals a `durable_operation`, run in a process of its own by
tests/agent/capabilities/test_durable_operation.py.

    python -m tests.agent._operation_worker DB_PATH LOG_PATH KILL_AT_STEP BACKEND

The run makes two model requests (a tool call, then text). Before each, the capability's `before_model_request` hook
calls its `stamp` operation, which logs `ran <step> <token>` (`token`: new for each call that runs) and returns a
`Stamp`; the hook logs `got <step> <token> <run id>` with what it got back. The model SIGKILLs the process at the
request of step `KILL_AT_STEP`, after the operation ran, so the process dies by construction with the operation's result
journaled and the step unfinished.
"""

from __future__ import annotations

import os
import signal
import sys
from dataclasses import dataclass
from typing import Any

import anyio
import pydantic

from edgewise.agent import Agent, RunContext
from edgewise.agent.capabilities import AbstractCapability, EdgewiseDurability, durable_operation
from edgewise.agent.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from edgewise.agent.models import ModelRequestContext
from edgewise.agent.models.function import AgentInfo, FunctionModel


class Stamp(pydantic.BaseModel):
    step: int
    token: str


@dataclass
class Stamping(AbstractCapability[Any]):
    log: str = ''
    id: str | None = 'stamping'

    def _write(self, line: str) -> None:
        with open(self.log, 'a') as file:
            file.write(line + '\n')

    @durable_operation(name='stamp')
    async def stamp(self, ctx: RunContext[Any], step: int) -> Stamp:
        token = os.urandom(4).hex()
        self._write(f'ran {step} {token}')
        return Stamp(step=step, token=token)

    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        got = await self.stamp(ctx, ctx.run_step)
        assert isinstance(got, Stamp)  # read back as the declared type
        self._write(f'got {got.step} {got.token} {ctx.run_id}')
        return request_context


def make_agent(db: str, log: str, kill_at: int) -> Agent[None, str]:
    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        responses = sum(isinstance(m, ModelResponse) for m in messages)
        if responses + 1 == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        if responses == 0:
            return ModelResponse([ToolCallPart('work', {}, 'call-1')])
        return ModelResponse([TextPart('done')])

    agent = Agent(FunctionModel(answer), capabilities=[Stamping(log=log), EdgewiseDurability(f'sqlite:///{db}')])

    @agent.tool_plain
    def work() -> str:
        """Do some work."""
        return 'worked'

    return agent


async def main(db: str, log: str, kill_at: int) -> Any:
    return (await make_agent(db, log, kill_at).run('go')).output


if __name__ == '__main__':
    db, log, kill_at, backend = sys.argv[1:5]
    print(anyio.run(main, db, log, int(kill_at), backend=backend))
