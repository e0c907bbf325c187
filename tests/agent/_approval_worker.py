"""An agent whose payment waits for approval, run in processes of their own by tests/agent/test_durable_approval.py.

    python -m tests.agent._approval_worker start STORE_URL RUN_ID
    python -m tests.agent._approval_worker resume STORE_URL RUN_ID approve|deny

`edgewise runs resume RUN_ID tests.agent._approval_worker:agent --store STORE_URL --approve p1` resumes it too.
The `pay` tool appends a line to the file `APPROVAL_LOG` names each time it runs. When `APPROVAL_HOLD` names a
directory, the tool writes `started` there and waits for a `go` file, so that the test can try a second resume
while this process holds the run. A resume refused because another process holds the run exits with status 3.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

import anyio

from edgewise.agent import Agent, DeferredToolRequests, RunContext
from edgewise.agent.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.graph.exceptions import RunInProgressError
from edgewise.graph.persistence.store import persistence_from_url

HOLD_LIMIT = 60.0
"""Seconds a held tool call waits for its `go` file before failing (the test creates it long before)."""


def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    if len(messages) == 1:
        return ModelResponse([ToolCallPart('pay', {'amount': 30}, 'p1')])
    last = messages[-1]
    assert isinstance(last, ModelRequest)
    return ModelResponse([TextPart(' / '.join(str(p.content) for p in last.parts if isinstance(p, ToolReturnPart)))])


agent: Agent[None, Any] = Agent(FunctionModel(answer), output_type=[str, DeferredToolRequests], name='payments')


@agent.tool(requires_approval=True)
def pay(ctx: RunContext[None], amount: int) -> str:
    with open(os.environ['APPROVAL_LOG'], 'a') as log:
        log.write(f'pay {ctx.tool_call_id}\n')
    if hold := os.environ.get('APPROVAL_HOLD'):
        (Path(hold) / 'started').touch()
        deadline = time.monotonic() + HOLD_LIMIT
        while not (Path(hold) / 'go').exists():
            if time.monotonic() > deadline:
                raise RuntimeError('the test never let the held tool call go on')
            time.sleep(0.01)
    return f'paid {amount}'


async def main(command: str, url: str, run_id: str, decision: str | None) -> int:
    async with persistence_from_url(url, run_id) as persistence:
        if command == 'start':
            result = await agent.run('pay the bill', persistence=persistence)
        else:
            approval: Any = True if decision == 'approve' else {'kind': 'tool-denied', 'message': 'Not today.'}
            try:
                result = await agent.resume(persistence, deferred_tool_results={'approvals': {'p1': approval}})
            except RunInProgressError as e:
                print(e, file=sys.stderr)
                return 3
    output = result.output
    print(
        f'waiting for {[c.tool_call_id for c in output.approvals]}'
        if isinstance(output, DeferredToolRequests)
        else output
    )
    return 0


if __name__ == '__main__':
    command, url, run_id, *rest = sys.argv[1:]
    sys.exit(anyio.run(main, command, url, run_id, rest[0] if rest else None))
