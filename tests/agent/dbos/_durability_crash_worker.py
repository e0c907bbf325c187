"""A process running one workflow of an agent with `DBOSDurability`, for the crash test:
`python -m tests.agent.dbos._durability_crash_worker URL EFFECTS MODE`.

MODE `start` starts the workflow `durability-crash-run` (its second tool call hangs until the process is killed);
MODE `recover` launches DBOS with the same executor id (`DBOS__VMID`), which recovers the workflow, and prints its
output. Every model request and every tool call appends a line to the file EFFECTS. The tool's effect is a DBOS
step of its own (tools run in the workflow's code under `DBOSDurability`).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
from dbos import DBOS, SetWorkflowID

from edgewise.agent import Agent
from edgewise.agent.durable_exec.dbos import DBOSDurability
from edgewise.agent.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.graph.dbos import DBOSWorker

EFFECTS = Path(sys.argv[2]) if len(sys.argv) > 2 else Path('effects.txt')
HANG = len(sys.argv) > 3 and sys.argv[3] == 'start'


def record(line: str) -> None:
    with EFFECTS.open('a') as file:
        file.write(f'{line}\n')


def scripted(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    step = (len(messages) + 1) // 2  # 1, 2, 3: one request per model turn
    record(f'model:{step}')
    if step < 3:
        return ModelResponse(parts=[ToolCallPart('effect', {'n': step})])
    return ModelResponse(parts=[TextPart('finished')])


agent = Agent(FunctionModel(scripted), name='durable-crasher', capabilities=[DBOSDurability()])


@DBOS.step(name='durable-crasher.effect')
async def effect_step(n: int) -> str:
    record(f'tool:{n}')
    if n == 2 and HANG:
        await anyio.sleep(3600)  # killed with SIGKILL here by the test
    return f'effect {n}'


@agent.tool_plain
async def effect(n: int) -> str:
    return await effect_step(n)


@DBOS.workflow(name='durable-crasher.answer')
async def answer(prompt: str) -> str:
    return (await agent.run(prompt)).output


def main(url: str) -> None:
    config = {'name': 'edgewise-durability-crash', 'system_database_url': url, 'log_level': 'WARNING'}
    with DBOSWorker(config, queues=[]):  # type: ignore[arg-type]
        if HANG:
            with SetWorkflowID('durability-crash-run'):
                handle: Any = DBOS.start_workflow(answer, 'go')
            handle.get_result()
        else:
            print(f'output={DBOS.retrieve_workflow("durability-crash-run").get_result()}', flush=True)


if __name__ == '__main__':
    main(sys.argv[1])
