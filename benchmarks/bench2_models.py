# mypy: disable-error-code="import-not-found,untyped-decorator"
"""The OpenAI Chat model over HTTP against pydantic-ai 2.x (the `bench2` group; its SDK-based model), both
talking to the same local server (`_chat_server`, a separate process whose CPU is not counted).

- client CPU per model round trip (`time.process_time` of this process), plain and streamed, 3 tools sent: the
  median of 15 batches of 40, the libraries' batches taking turns, so that a burst of load on the shared
  machine falls on a batch or two of each rather than on one library's whole sample;
- 1,000 concurrent agent runs: wall time per run (throughput), the median of 3 batches per library taking turns
  (the order swapped each round), and Python memory per run in flight (tracemalloc, while the server holds all
  1,000 requests);
- `import <library>.models.openai` in a fresh process.

Both libraries get an `httpx.AsyncClient` with the same limits (room for 1,000 connections), each over its own
library's transport: httpx's `AsyncHTTPTransport` for pydantic-ai (the one its providers use), Edgewise's
`AsyncPoolTransport` for Edgewise (the one its providers use). The throughput is also measured with Edgewise
over httpx's transport, the client pydantic-ai gets, for reference.
"""

from __future__ import annotations

import gc
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import httpx

from benchmarks._harness import Result, import_times, report

ROUND_TRIPS = 40
CONCURRENT = 1000
REPEATS = 15
BATCHES = 3
PROMPT = 'What is the weather in Paris, and should I take an umbrella?'


def get_weather(city: str) -> str:
    """The current weather in a city.

    Args:
        city: The city's name.
    """
    return f'{city}: 19 degrees'


def get_forecast(city: str, days: int = 3) -> str:
    """The forecast of the next days in a city.

    Args:
        city: The city's name.
        days: How many days ahead.
    """
    return f'{city}: mild for {days} days'


def convert_temperature(value: float, to_unit: str = 'F') -> str:
    """Convert a temperature in Celsius.

    Args:
        value: Degrees Celsius.
        to_unit: `F` or `K`.
    """
    return f'{value * 9 / 5 + 32 if to_unit == "F" else value + 273.15} {to_unit}'


TOOLS: list[Callable[..., str]] = [get_weather, get_forecast, convert_temperature]


@contextmanager
def _server() -> Iterator[str]:
    process = subprocess.Popen([sys.executable, '-m', 'benchmarks._chat_server'], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    port = int(process.stdout.readline())
    try:
        yield f'http://127.0.0.1:{port}'
    finally:
        process.terminate()
        process.wait()
        process.stdout.close()


def _client(library: str) -> httpx.AsyncClient:
    """A client with room for all the runs, over the transport of `library` (`'edgewise over httpx'`: httpx's)."""
    limits = httpx.Limits(max_connections=CONCURRENT + 100, max_keepalive_connections=CONCURRENT + 100)
    timeout = httpx.Timeout(600.0, connect=30.0)
    if library == 'edgewise':
        from edgewise.agent.providers import AsyncPoolTransport

        return httpx.AsyncClient(transport=AsyncPoolTransport(limits=limits), timeout=timeout)
    return httpx.AsyncClient(limits=limits, timeout=timeout)


class _Library:
    """One library's model, agent and request, over one client."""

    def __init__(self, name: str, model: Any, agent: Any, round_trip: Callable[[bool], Awaitable[None]]) -> None:
        self.name = name
        self.model = model
        self.agent = agent
        self.round_trip = round_trip


def _edgewise(base_url: str, client: httpx.AsyncClient) -> _Library:
    from edgewise.agent import Agent, Tool
    from edgewise.agent.messages import ModelMessage, ModelRequest, UserPromptPart
    from edgewise.agent.models.openai import OpenAIChatModel
    from edgewise.agent.providers.openai import OpenAIProvider

    model = OpenAIChatModel(
        'gpt-4o', provider=OpenAIProvider(base_url=base_url, api_key='sk-bench', http_client=client)
    )
    agent = Agent(model, tools=TOOLS)
    params = _params(Tool, 'edgewise.agent')
    messages: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart(PROMPT)])]

    async def round_trip(streamed: bool) -> None:
        prepared = model.customize_request_parameters(params)  # as the agent does before each request
        if streamed:
            async with model.request_stream(messages, None, prepared) as stream:
                async for _ in stream:
                    pass
            assert stream.get().parts
        else:
            assert (await model.request(messages, None, prepared)).parts

    return _Library('edgewise', model, agent, round_trip)


def _pydantic_ai(base_url: str, client: httpx.AsyncClient) -> _Library:
    from pydantic_ai import Agent, Tool
    from pydantic_ai.messages import ModelRequest, UserPromptPart
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    model = OpenAIChatModel(
        'gpt-4o', provider=OpenAIProvider(base_url=base_url, api_key='sk-bench', http_client=client)
    )
    agent = Agent(model, tools=TOOLS)
    params = _params(Tool, 'pydantic_ai')
    messages = [ModelRequest(parts=[UserPromptPart(PROMPT)])]

    async def round_trip(streamed: bool) -> None:
        if streamed:  # `request` and `request_stream` prepare the parameters themselves
            async with model.request_stream(messages, None, params) as stream:
                async for _ in stream:
                    pass
            assert stream.get().parts
        else:
            assert (await model.request(messages, None, params)).parts

    return _Library('pydantic-ai', model, agent, round_trip)


def _params(tool_class: Any, package: str) -> Any:
    models = __import__(f'{package}.models', fromlist=['ModelRequestParameters'])
    definitions = [tool_class(fn).tool_def for fn in TOOLS]
    return models.ModelRequestParameters(function_tools=definitions, allow_text_output=True)


async def _cpu_per_round_trip(library: _Library, streamed: bool) -> float:
    gc.collect()
    start = time.process_time()
    for _ in range(ROUND_TRIPS):
        await library.round_trip(streamed)
    return (time.process_time() - start) / ROUND_TRIPS


async def _concurrent_runs(library: _Library, runs: int = CONCURRENT) -> float:
    """Wall time per run of `runs` agent runs started together."""

    async def one() -> None:
        result = await library.agent.run(PROMPT)
        assert result.output

    gc.collect()
    start = time.perf_counter()
    async with anyio.create_task_group() as group:
        for _ in range(runs):
            group.start_soon(one)
    return (time.perf_counter() - start) / runs


async def _memory_per_run_in_flight(library: _Library, control: httpx.AsyncClient) -> float:
    """Bytes of Python memory per agent run while the server holds all CONCURRENT requests."""

    async def one() -> None:
        result = await library.agent.run(PROMPT)
        assert result.output

    gc.collect()
    tracemalloc.start()
    baseline = tracemalloc.get_traced_memory()[0]
    async with anyio.create_task_group() as group:
        for _ in range(CONCURRENT):
            group.start_soon(one)
        # The count lives in the server process: poll it (no event of this process can say it).
        while int((await control.get('/held')).text) < CONCURRENT:  # noqa: ASYNC110
            await anyio.sleep(0.05)
        gc.collect()
        in_flight = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        await control.post('/release')
    return (in_flight - baseline) / CONCURRENT


def _library(name: str, base_url: str, client: httpx.AsyncClient) -> _Library:
    return (_pydantic_ai if name == 'pydantic-ai' else _edgewise)(base_url, client)


async def _measure_all(url: str) -> tuple[dict[str, dict[str, list[float]]], dict[str, list[float]]]:
    """Per library, the samples of each measure; and the wall times per run of the batches of runs."""
    samples: dict[str, dict[str, list[float]]] = {
        name: {'plain': [], 'streamed': [], 'memory': []} for name in ('pydantic-ai', 'edgewise')
    }
    runs: dict[str, list[float]] = {'pydantic-ai': [], 'edgewise': [], 'edgewise over httpx': []}
    async with httpx.AsyncClient(base_url=url, timeout=httpx.Timeout(300.0)) as control:
        async with _client('pydantic-ai') as pydantic_ai_client, _client('edgewise') as edgewise_client:
            libraries = [
                _library('pydantic-ai', f'{url}/v1', pydantic_ai_client),
                _library('edgewise', f'{url}/v1', edgewise_client),
            ]
            for library in libraries:  # warm: connection open, caches filled
                for streamed in (False, True):
                    for _ in range(5):
                        await library.round_trip(streamed)
            for _ in range(REPEATS):
                for kind, streamed in (('plain', False), ('streamed', True)):
                    for library in libraries:
                        samples[library.name][kind].append(await _cpu_per_round_trip(library, streamed))
        # Batches of runs (connections included), each library's in turn, the first to go swapped each round.
        for batch in range(BATCHES):
            for name in ['pydantic-ai', 'edgewise', 'edgewise over httpx'][:: 1 if batch % 2 == 0 else -1]:
                async with _client(name) as client:
                    library = _library(name, f'{url}/v1', client)
                    await _concurrent_runs(library, runs=20)  # warm: imports and caches
                    runs[name].append(await _concurrent_runs(library))
        for name in samples:
            async with _client(name) as client:
                library = _library(name, f'{url}/hold/v1', client)
                await control.post('/release')
                samples[name]['memory'].append(await _memory_per_run_in_flight(library, control))
    return samples, runs


def _import_times(modules: list[str], repeats: int = 9) -> dict[str, float]:
    times = import_times([f'import {module}' for module in modules], repeats)
    return {module: times[f'import {module}'] for module in modules}


def main() -> None:
    with _server() as url:
        samples, runs = anyio.run(_measure_all, url)
    median = {
        name: {key: statistics.median(values) for key, values in kinds.items()} for name, kinds in samples.items()
    }
    for key, title, unit, target in [
        ('plain', 'models: client CPU, Chat Completions request with 3 tools', 'round trip', 0.3),
        ('streamed', 'models: client CPU, streamed Chat Completions request with 3 tools', 'round trip', 0.3),
    ]:
        result = Result(title, unit, {name: median[name][key] for name in median})
        result.notes.append(f'target: edgewise <= {target}x pydantic-ai')
        print(report(result, anchor='pydantic-ai'))
    per_run = {name: statistics.median(values) for name, values in runs.items()}
    result = Result(f'models: {CONCURRENT} concurrent agent runs, wall time', 'run', per_run)
    for name in ('edgewise', 'edgewise over httpx'):
        ratio = per_run['pydantic-ai'] / per_run[name]
        result.notes.append(
            f'throughput: {name} {ratio:.2f}x pydantic-ai' + (' (target >= 3x)' if name == 'edgewise' else '')
        )
    print(report(result, anchor='pydantic-ai'))
    memory = median['edgewise']['memory'] / median['pydantic-ai']['memory']
    print(f'## models: Python memory per agent run in flight ({CONCURRENT} held by the server)')
    for name in median:
        print(f'  {name:<44} {median[name]["memory"] / 1024:9.1f} KiB')
    print(f'  note: edgewise {memory:.3f}x pydantic-ai (target <= 0.5x)')

    imports = Result('models: `python -c "import ...models.openai"` in a fresh process', 'process')
    times = _import_times(['pydantic_ai.models.openai', 'edgewise.agent.models.openai', 'sys'])
    imports.per_unit['pydantic-ai (pydantic_ai.models.openai)'] = times['pydantic_ai.models.openai']
    imports.per_unit['edgewise (edgewise.agent.models.openai)'] = times['edgewise.agent.models.openai']
    imports.per_unit['bare interpreter (import sys)'] = times['sys']
    imports.notes.append('target: edgewise <= 0.3x pydantic-ai (whole process time, interpreter start included)')
    print(report(imports, anchor='pydantic-ai (pydantic_ai.models.openai)'))

    # What a program that talks to OpenAI imports: the agent and the model class.
    program = Result(
        'models: `python -c "import ...models.openai; from ... import Agent"` in a fresh process', 'process'
    )
    pydantic_ai = 'import pydantic_ai.models.openai; from pydantic_ai import Agent'
    edgewise = 'import edgewise.agent.models.openai; from edgewise.agent import Agent'
    both = import_times([pydantic_ai, edgewise])
    program.per_unit['pydantic-ai'] = both[pydantic_ai]
    program.per_unit['edgewise'] = both[edgewise]
    program.notes.append('no target of its own: the agent engine included, for comparison with the row above')
    print(report(program, anchor='pydantic-ai'))


if __name__ == '__main__':
    main()
