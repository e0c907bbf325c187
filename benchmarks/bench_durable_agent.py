# mypy: disable-error-code="import-not-found,untyped-decorator,misc"
"""A durable agent step on SQLite against LangGraph's `create_react_agent` with `SqliteSaver` (bench-only deps).

A step is one round of the ReAct loop: a model request answered with a tool call, the tool call, and what
each framework stores to survive a crash (Edgewise: a snapshot per node; LangGraph: a checkpoint per
super-step). Both get the same scripted model (a counter, no work of its own, no token estimate) and the same
trivial tool; each run starts from a history of 10 or 500 messages, so that the cost per step shows whether it
grows with the conversation.

A step's cost is measured inside one run: the scripted model notes the time of each request, and a step is the
time from one request to the next (the tool call and every store write between them). The median over the
steps of a few runs leaves out what a run pays once (opening the store, writing the history it is given) and
the odd step a busy machine slows down, which a difference of two whole runs' times does not.
"""

from __future__ import annotations

import gc
import importlib
import itertools
import os
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

from benchmarks._harness import Result, report

STEPS = 60
HISTORY = (10, 500)
RUNS = 5


def edgewise_run(db: Path, history_length: int, steps: int, stamps: list[float]) -> Any:
    from edgewise.agent import Agent, UsageLimits
    from edgewise.agent.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, UserPromptPart
    from edgewise.agent.models import Model
    from edgewise.graph.persistence.sqlite import SqliteStatePersistence

    counter = [0]

    class ScriptedModel(Model):
        """Answers from a counter, as the LangGraph side's chat model does (no token estimate over the history,
        which `FunctionModel` makes and which would grow with it)."""

        async def request(self, messages: Any, model_settings: Any, model_request_parameters: Any) -> Any:
            stamps.append(time.perf_counter())
            counter[0] += 1
            if counter[0] <= steps:
                return ModelResponse(parts=[ToolCallPart('step', {'i': counter[0]}, f'call-{counter[0]}')])
            return ModelResponse(parts=[TextPart('done')])

        @property
        def model_name(self) -> str:
            return 'scripted'

        @property
        def system(self) -> str:
            return 'scripted'

    agent = Agent(ScriptedModel())

    @agent.tool_plain
    async def step(i: int) -> int:
        return i

    history: list[Any] = []
    for i in range(history_length // 2):
        history += [ModelRequest([UserPromptPart(f'question {i}')]), ModelResponse([TextPart(f'answer {i}')])]
    limits = UsageLimits(request_limit=steps + 10)

    async def run() -> None:
        counter[0] = 0
        async with SqliteStatePersistence(db, os.urandom(8).hex()) as persistence:
            result = await agent.run('go', message_history=history, usage_limits=limits, persistence=persistence)
        assert result.output == 'done'

    return run


def langgraph_run(db: Path, history_length: int, steps: int, stamps: list[float]) -> Any:
    messages_module: Any = importlib.import_module('langchain_core.messages')
    chat_models: Any = importlib.import_module('langchain_core.language_models.chat_models')
    outputs: Any = importlib.import_module('langchain_core.outputs')
    tools_module: Any = importlib.import_module('langchain_core.tools')
    prebuilt: Any = importlib.import_module('langgraph.prebuilt')
    saver: Any = importlib.import_module('langgraph.checkpoint.sqlite').SqliteSaver
    AIMessage, HumanMessage = messages_module.AIMessage, messages_module.HumanMessage

    counter = [0]

    class ScriptedChat(chat_models.BaseChatModel):
        @property
        def _llm_type(self) -> str:
            return 'scripted'

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

        def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> Any:
            stamps.append(time.perf_counter())
            counter[0] += 1
            if counter[0] <= steps:
                call = {'name': 'step', 'args': {'i': counter[0]}, 'id': f'call-{counter[0]}', 'type': 'tool_call'}
                message = AIMessage(content='', tool_calls=[call])
            else:
                message = AIMessage(content='done')
            return outputs.ChatResult(generations=[outputs.ChatGeneration(message=message)])

    @tools_module.tool
    def step(i: int) -> int:
        """Take a step."""
        return i

    history: list[Any] = []
    for i in range(history_length // 2):
        history += [HumanMessage(f'question {i}'), AIMessage(f'answer {i}')]

    def run() -> None:
        counter[0] = 0
        conn = sqlite3.connect(db, check_same_thread=False)
        try:
            agent = prebuilt.create_react_agent(ScriptedChat(), [step], checkpointer=saver(conn))
            config: Any = {'configurable': {'thread_id': os.urandom(6).hex()}, 'recursion_limit': 10_000}
            out = agent.invoke({'messages': [*history, HumanMessage('go')]}, config)
            assert out['messages'][-1].content == 'done'
        finally:
            conn.close()

    return run


def step_times(run: Any, stamps: list[float], is_async: bool) -> list[float]:
    """The time of each step of one run of `STEPS` steps (from one model request to the next)."""
    stamps.clear()
    gc.collect()
    if is_async:
        anyio.run(run)
    else:
        run()
    assert len(stamps) == STEPS + 1, len(stamps)
    return [later - earlier for earlier, later in itertools.pairwise(stamps)]


def main() -> None:
    makers = {
        'edgewise durable agent, SQLite': edgewise_run,
        'langgraph create_react_agent, SqliteSaver': langgraph_run,
    }
    result = Result(
        f'ReAct step (model round trip + tool call + durable store), median of the {STEPS} steps of {RUNS} runs',
        'step',
    )
    with tempfile.TemporaryDirectory() as tmp:
        cases: dict[str, tuple[Any, list[float], bool]] = {}
        for n in HISTORY:
            for name, make in makers.items():
                stamps: list[float] = []
                run = make(Path(tmp) / f'{name.split()[0]}-{n}.db', n, STEPS, stamps)
                cases[f'{name} @{n}'] = (run, stamps, name.startswith('edgewise'))
        times: dict[str, list[float]] = {case: [] for case in cases}
        # Runs interleaved (A B C D A B C D ...), so that a stretch of load on the machine falls on every case;
        # the first round warms up (imports, caches) and is not counted.
        for index in range(RUNS + 1):
            for case, (run, stamps, is_async) in cases.items():
                steps = step_times(run, stamps, is_async)
                if index:
                    times[case] += steps
        for case, steps in times.items():
            result.per_unit[case] = statistics.median(steps)
    edgewise, langgraph = list(makers)
    print(report(result, anchor=f'{edgewise} @{HISTORY[0]}'), flush=True)
    for n in HISTORY:
        ratio = result.ratio(f'{edgewise} @{n}', f'{langgraph} @{n}')
        print(f'  => @{n} messages: edgewise / langgraph = {ratio:.3f}x')
    first, last = HISTORY
    growth = {name: result.ratio(f'{name} @{last}', f'{name} @{first}') for name in makers}
    print(
        f'  => per step @{last} / @{first}: edgewise {growth[edgewise]:.2f}, langgraph {growth[langgraph]:.2f}',
        flush=True,
    )
