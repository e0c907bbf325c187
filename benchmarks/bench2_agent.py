# mypy: disable-error-code="import-not-found,untyped-decorator"
"""Agent overhead against pydantic-ai 2.x (the `bench2` group): round trips, a trivial run, import time.

Both agents get the same scripted models (async functions, so that no worker thread is involved) and the
same async tool, so the figures measure the agent loop itself.
"""

from __future__ import annotations

import itertools
import statistics
import time
from collections.abc import Callable
from typing import Any

from benchmarks._harness import Case, Result, import_times, measure, report

TOOL_CALLS = 200
TRIVIAL_RUNS = 200


def _edgewise_tool_agent(stamps: list[float], ratios: list[float]) -> Callable[[], Any]:
    from edgewise.agent import Agent
    from edgewise.agent.messages import ModelResponse, TextPart, ToolCallPart
    from edgewise.agent.models.function import FunctionModel

    counter = [0]

    async def script(messages: list[Any], info: Any) -> ModelResponse:
        stamps.append(time.perf_counter())
        counter[0] += 1
        if counter[0] <= TOOL_CALLS:
            return ModelResponse(parts=[ToolCallPart('step', {'i': counter[0]})])
        return ModelResponse(parts=[TextPart('done')])

    agent = Agent(FunctionModel(script))

    @agent.tool_plain
    async def step(i: int) -> int:
        return i

    async def run() -> None:
        counter[0] = 0
        stamps.clear()
        result = await agent.run('go', usage_limits=_edgewise_limits())
        assert result.output == 'done'
        ratios.append(_quarter_ratio(stamps))

    return run


def _edgewise_limits() -> Any:
    from edgewise.agent import UsageLimits

    return UsageLimits(request_limit=TOOL_CALLS + 10)


def _pydantic_ai_tool_agent(stamps: list[float], ratios: list[float]) -> Callable[[], Any]:
    from pydantic_ai import Agent, UsageLimits
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import FunctionModel

    counter = [0]

    async def script(messages: list[Any], info: Any) -> ModelResponse:
        stamps.append(time.perf_counter())
        counter[0] += 1
        if counter[0] <= TOOL_CALLS:
            return ModelResponse(parts=[ToolCallPart('step', {'i': counter[0]})])
        return ModelResponse(parts=[TextPart('done')])

    agent = Agent(FunctionModel(script))

    @agent.tool_plain
    async def step(i: int) -> int:
        return i

    async def run() -> None:
        counter[0] = 0
        stamps.clear()
        result = await agent.run('go', usage_limits=UsageLimits(request_limit=TOOL_CALLS + 10))
        assert result.output == 'done'
        ratios.append(_quarter_ratio(stamps))

    return run


def _quarter_ratio(stamps: list[float]) -> float:
    """Time per round trip in the last quarter of the run over the first quarter."""
    gaps = [b - a for a, b in itertools.pairwise(stamps)]
    quarter = len(gaps) // 4
    return sum(gaps[-quarter:]) / sum(gaps[:quarter])


def _median_and_range(ratios: list[float]) -> str:
    return f'{statistics.median(ratios):.2f}x (runs {min(ratios):.2f}-{max(ratios):.2f}x)'


def _trivial(make_agent: Callable[[], Any]) -> Callable[[], Any]:
    agent = make_agent()

    async def run() -> None:
        for _ in range(TRIVIAL_RUNS):
            await agent.run('hi')

    return run


def _edgewise_test_agent() -> Any:
    from edgewise.agent import Agent
    from edgewise.agent.models.test import TestModel

    return Agent(TestModel())


def _pydantic_ai_test_agent() -> Any:
    from pydantic_ai import Agent
    from pydantic_ai.models.test import TestModel

    return Agent(TestModel())


def main() -> None:
    stamps: list[float] = []
    edgewise_ratios: list[float] = []
    pydantic_ratios: list[float] = []
    round_trips = measure(
        f'agent: {TOOL_CALLS} sequential tool calls then an answer',
        'model round trip',
        [
            Case('pydantic-ai', _pydantic_ai_tool_agent(stamps, pydantic_ratios), units=TOOL_CALLS + 1, is_async=True),
            Case('edgewise', _edgewise_tool_agent(stamps, edgewise_ratios), units=TOOL_CALLS + 1, is_async=True),
        ],
        repeats=5,
    )
    # One run's ratio is at the mercy of whatever else the machine does meanwhile: report the median over runs.
    round_trips.notes.append(
        'last quarter / first quarter per round trip (median over runs): '
        f'edgewise {_median_and_range(edgewise_ratios)}, pydantic-ai {_median_and_range(pydantic_ratios)} '
        '(target edgewise <= 1.3x)'
    )
    round_trips.notes.append('target: edgewise <= 0.03x pydantic-ai')
    print(report(round_trips, anchor='pydantic-ai'))

    trivial = measure(
        'agent: a trivial TestModel run',
        'run',
        [
            Case('pydantic-ai', _trivial(_pydantic_ai_test_agent), units=TRIVIAL_RUNS, is_async=True),
            Case('edgewise', _trivial(_edgewise_test_agent), units=TRIVIAL_RUNS, is_async=True),
        ],
        repeats=5,
    )
    trivial.notes.append('target: edgewise <= 0.05x pydantic-ai')
    print(report(trivial, anchor='pydantic-ai'))

    # `edgewise.agent` imports its names on first use, so `import edgewise.agent` alone would measure nothing:
    # both sides import `Agent`, which is what a program does.
    imports = Result('agent: `python -c "from ... import Agent"` in a fresh process', 'process')
    pydantic_ai, edgewise = 'from pydantic_ai import Agent', 'from edgewise.agent import Agent'
    medians = import_times([pydantic_ai, edgewise, 'import sys'])
    imports.per_unit[f'pydantic-ai ({pydantic_ai})'] = medians[pydantic_ai]
    imports.per_unit[f'edgewise ({edgewise})'] = medians[edgewise]
    imports.per_unit['bare interpreter (import sys)'] = medians['import sys']
    imports.notes.append('target: edgewise <= 0.4x pydantic-ai (whole process time, interpreter start included)')
    print(report(imports, anchor=f'pydantic-ai ({pydantic_ai})'))


if __name__ == '__main__':
    main()
