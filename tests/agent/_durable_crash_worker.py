"""The agent of the durable crash test, and the process that runs it until it kills itself.

Every model request and tool call appends a line to a log file (kept by the kernel when the process dies), and
passes kill points: the process SIGKILLs itself at the point `kill_at` (counted from 1), so the moments a run
dies at are chosen by construction, among: during a model request, between two chunks of a streamed response,
at the start or the end of each of three parallel tool calls, and during the output validator.
"""

from __future__ import annotations

import os
import signal
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.lowlevel

from edgewise.agent import Agent, RunContext
from edgewise.agent.messages import ModelMessage, ModelResponse, ModelResponsePart, TextPart, ToolCallPart
from edgewise.agent.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from edgewise.graph.persistence.file import FileStatePersistence
from edgewise.graph.persistence.postgres import PostgresStatePersistence
from edgewise.graph.persistence.sqlite import SqliteStatePersistence
from edgewise.graph.persistence.store import DurableStatePersistence

CALLS = ('call-1', 'call-2', 'call-3')
OUTPUT = 'done'


@dataclass
class Control:
    """Where this process logs, and the kill point it dies at (0: none)."""

    log: str
    kill_at: int = 0
    points: int = 0


control = Control(log=os.devnull)


def log(line: str) -> None:
    fd = os.open(control.log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, f'{line}\n'.encode())
    finally:
        os.close(fd)


def point(label: str) -> None:
    control.points += 1
    if control.points == control.kill_at:
        log(f'killed at {label}')
        os.kill(os.getpid(), signal.SIGKILL)


def _position(messages: list[ModelMessage]) -> int:
    return sum(isinstance(m, ModelResponse) for m in messages)


_RESPONSES: list[list[ModelResponsePart]] = [
    [ToolCallPart('work', {'n': n}, call) for n, call in enumerate(CALLS, 1)],
    [TextPart(OUTPUT)],
]
_CHUNKS: list[list[str | DeltaToolCalls]] = [
    [{i: DeltaToolCall(name='work', json_args=f'{{"n": {i + 1}}}', tool_call_id=call)} for i, call in enumerate(CALLS)],
    ['do', 'ne'],
]


def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    n = _position(messages)
    log(f'request {n}')
    point(f'request {n}')
    return ModelResponse(list(_RESPONSES[n]))


async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
    n = _position(messages)
    log(f'request {n}')
    for index, chunk in enumerate(_CHUNKS[n]):
        point(f'request {n} chunk {index}')
        yield chunk


agent = Agent(FunctionModel(answer, stream_function=stream), deps_type=str)


@agent.tool
async def work(ctx: RunContext[str], n: int) -> int:
    """Do some work.

    Args:
        n: Which work.
    """
    log(f'start {ctx.tool_call_id}')
    point(f'start {ctx.tool_call_id}')
    await anyio.lowlevel.checkpoint()  # lets the other calls start
    log(f'end {ctx.tool_call_id}')
    point(f'end {ctx.tool_call_id}')
    return n * 10


@agent.output_validator
def validate(ctx: RunContext[str], output: str) -> str:
    point('validator')
    return output


def open_run(kind: str, location: str, run_id: str) -> DurableStatePersistence[Any, Any]:
    if kind == 'file':
        return FileStatePersistence(os.path.join(location, f'{run_id}.json'))
    if kind == 'sqlite':
        return SqliteStatePersistence(os.path.join(location, 'runs.db'), run_id)
    return PostgresStatePersistence(location, run_id)


async def _run(kind: str, location: str, run_id: str, mode: str) -> None:
    async with open_run(kind, location, run_id) as persistence:
        if mode == 'stream':
            async with agent.run_stream('go', deps='child', persistence=persistence) as result:
                async for _ in result.stream_text(delta=True):
                    pass
        else:
            await agent.run('go', deps='child', persistence=persistence)


def child(kind: str, location: str, run_id: str, mode: str, kill_at: int, log_path: str, backend: str) -> None:
    """Run one agent run, dying at kill point `kill_at` (or logging how many points a whole run passes)."""
    control.log, control.kill_at, control.points = log_path, kill_at, 0
    anyio.run(_run, kind, location, run_id, mode, backend=backend)
    log(f'points {control.points}')


def _warm_up() -> None:
    """Do once, in the fork server that imports this module, what a process's first run does once (build the
    agent graph and the snapshot type adapter, compile span templates, ...), so that each forked run costs
    milliseconds. On the file backend, which keeps nothing open that the forked processes would share."""
    with tempfile.TemporaryDirectory() as directory:
        for backend in ('asyncio', 'trio'):
            for mode in ('run', 'stream'):
                anyio.run(_run, 'file', directory, f'warm-up-{backend}-{mode}', mode, backend=backend)


_warm_up()
