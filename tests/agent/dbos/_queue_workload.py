"""The agent the queue crash test runs in worker processes, beside the graph of tests/graph/dbos/_workload.py.

A run's prompt is its key. The scripted model asks for two tool calls, one per turn, then answers with the trail of
the run: `model:<turn>:<pid>` for each model request and `tool:<n>:<pid>` for each tool call, read back from the
messages (so the pids are those of the executions DBOS recorded, replayed or not). Each model request and tool call
also writes a row to the effects table when it is done (steps 11-13: model turns, 21-22: tool calls), so the
table counts every execution, recorded or not.
"""

from __future__ import annotations

import json
import os
import time

from edgewise.agent import Agent, RunContext
from edgewise.agent.durable_exec.dbos import DBOSAgent
from edgewise.agent.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from edgewise.agent.models.function import AgentInfo, FunctionModel
from tests.graph.dbos._workload import EFFECTS, NODE_SECONDS, QUEUE

TURNS = 3
"""Model requests per run (the first two answered with a tool call each)."""


def _prompt(messages: list[ModelMessage]) -> str:
    first = messages[0]
    assert isinstance(first, ModelRequest)
    content = first.parts[-1].content  # type: ignore[union-attr]
    assert isinstance(content, str)
    return content


def scripted(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    started = time.time()
    key = _prompt(messages)
    turn = sum(isinstance(m, ModelResponse) for m in messages) + 1
    time.sleep(NODE_SECONDS)
    EFFECTS.record(key, 10 + turn, started)
    if turn < TURNS:
        return ModelResponse(parts=[ToolCallPart('effect', {'n': turn, 'model_pid': os.getpid()})])
    trail: list[str] = []
    for message in messages:
        for part in message.parts:
            if isinstance(part, ToolCallPart):
                args = part.args_as_dict()
                trail.append(f'model:{args["n"]}:{args["model_pid"]}')
            elif isinstance(part, ToolReturnPart):
                trail.append(str(part.content))
    trail.append(f'model:{turn}:{os.getpid()}')
    return ModelResponse(parts=[TextPart(json.dumps({'key': key, 'trail': trail}))])


agent = Agent(FunctionModel(scripted), name='queued')


@agent.tool
def effect(ctx: RunContext[None], n: int, model_pid: int) -> str:
    started = time.time()
    key = _prompt(ctx.messages)
    time.sleep(NODE_SECONDS)
    EFFECTS.record(key, 20 + n, started)
    return f'tool:{n}:{os.getpid()}'


dbos_agent = DBOSAgent(agent)

__all__ = ('QUEUE', 'TURNS', 'dbos_agent')
