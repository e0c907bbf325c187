"""A process running one DBOSAgent run, for the crash test: `python -m tests.agent.dbos._crash_worker URL EFFECTS MODE`.

MODE `start` starts the run `crash-run` (its second tool call hangs until the process is killed); MODE `recover`
launches DBOS with the same executor id (`DBOS__VMID`), which recovers the run, and prints its output. Every
model request and every tool call appends a line to the file EFFECTS.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from edgewise.agent import Agent
from edgewise.agent.durable_exec.dbos import DBOSAgent
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


agent = Agent(FunctionModel(scripted), name='crasher')


@agent.tool_plain
def effect(n: int) -> str:
    record(f'tool:{n}')
    if n == 2 and HANG:
        time.sleep(3600)  # killed with SIGKILL here by the test
    return f'effect {n}'


durable = DBOSAgent(agent)


def main(url: str) -> None:
    config = {'name': 'edgewise-agent-crash', 'system_database_url': url, 'log_level': 'WARNING'}
    with DBOSWorker(config, queues=[]):  # type: ignore[arg-type]
        if HANG:
            durable.run_sync('go', run_id='crash-run')
        else:
            print(f'output={durable.result_sync("crash-run").output}', flush=True)


if __name__ == '__main__':
    main(sys.argv[1])
