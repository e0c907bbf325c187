# mypy: disable-error-code="import-not-found"
"""Streamed structured output against pydantic-ai 2.x (the `bench2` group): a list of items streamed as output
tool arguments in 8-byte chunks with `debounce_by=None`, every partial output validated.

Both agents get the same async stream function and the same pydantic output type. pydantic-ai re-parses and
re-validates the whole argument buffer on every chunk; Edgewise parses each chunk once and validates only
what it completes. Reported per chunk, for outputs of about 2 KB, 8 KB and 32 KB (the cost per chunk should
stay flat as the output grows).
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from benchmarks._harness import Case, measure, report

CHUNK = 8
SIZES = {'2 KB': 50, '8 KB': 200, '32 KB': 800}


class Item(BaseModel):
    name: str
    price: float
    tags: list[str]


class Catalog(BaseModel):
    items: list[Item]


def _arguments(count: int) -> str:
    items = [{'name': f'i{i:03d}', 'price': i + 0.5, 'tags': [f't{i % 7}']} for i in range(count)]
    return json.dumps({'items': items}, separators=(',', ':'))


def _chunks(count: int) -> list[str]:
    text = _arguments(count)
    return [text[i : i + CHUNK] for i in range(0, len(text), CHUNK)]


def _contender(package: str, count: int, seen: list[int]) -> Callable[[], Any]:
    """The same streamed run for `edgewise.agent` or `pydantic_ai` (both have these names)."""
    agent_module = importlib.import_module(package)
    function_module = importlib.import_module(f'{package}.models.function')
    delta: Any = function_module.DeltaToolCall
    chunks = _chunks(count)

    async def stream(messages: list[Any], info: Any) -> Any:
        yield {0: delta(name='final_result', json_args=chunks[0], tool_call_id='call')}
        for chunk in chunks[1:]:
            yield {0: delta(json_args=chunk)}

    agent = agent_module.Agent(function_module.FunctionModel(stream_function=stream), output_type=Catalog)

    async def run() -> None:
        partials = 0
        last: Any = None
        async with agent.run_stream('go') as result:
            async for output in result.stream_output(debounce_by=None):
                partials += 1
                last = output
        assert len(last.items) == count
        seen.append(partials)

    return run


def main() -> None:
    per_chunk: dict[str, float] = {}
    for label, count in SIZES.items():
        chunks = len(_chunks(count))
        edgewise_seen: list[int] = []
        pydantic_seen: list[int] = []
        result = measure(
            f'streaming: {count} items ({label}, {len(_arguments(count))} bytes) in {CHUNK}-byte chunks',
            'chunk',
            [
                Case('pydantic-ai', _contender('pydantic_ai', count, pydantic_seen), units=chunks, is_async=True),
                Case('edgewise', _contender('edgewise.agent', count, edgewise_seen), units=chunks, is_async=True),
            ],
            repeats=3 if count > 200 else 5,
        )
        result.notes.append(
            f'{chunks} chunks; partial outputs yielded per run: edgewise {edgewise_seen[-1]}, '
            f'pydantic-ai {pydantic_seen[-1]}'
        )
        if count == 200:
            result.notes.append('target: edgewise <= 0.1x pydantic-ai')
        per_chunk[label] = result.per_unit['edgewise']
        print(report(result, anchor='pydantic-ai'), flush=True)
    sizes = ', '.join(f'{label} {seconds * 1e6:.1f} us' for label, seconds in per_chunk.items())
    print(f'edgewise per chunk: {sizes}; 32 KB / 2 KB = {per_chunk["32 KB"] / per_chunk["2 KB"]:.2f}x (flat: ~1x)')
