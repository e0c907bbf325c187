"""Write the stored-data fixtures of tests/agent/stored/ with the Edgewise of this checkout.

`python -m tools.make_store_fixtures VERSION` (from the checkout's root) writes tests/agent/stored/VERSION/:
a message history with every common kind of part (`messages.json`), and three agent runs (finished, waiting for
an approval, interrupted in the middle of a step) in a SQLite store (`runs.db`) and a file store (`runs/`).
Run it once per stored format that must keep loading, and commit what it writes: the tests then check that
today's code reads what that version wrote.
"""

from __future__ import annotations

import sys
from datetime import datetime, timezone
from pathlib import Path

import anyio
from tests.agent.stored.agents import RUN_IDS, ProcessKilled, crash_points, refund_agent, seat_agent

from edgewise.agent.messages import (
    BinaryImage,
    ImageUrl,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from edgewise.agent.usage import RequestUsage
from edgewise.graph.persistence.file import FileStatePersistence
from edgewise.graph.persistence.sqlite import SqliteStatePersistence

WHEN = datetime(2026, 11, 30, 12, 0, tzinfo=timezone.utc)


def history() -> list[ModelRequest | ModelResponse]:
    """A conversation that uses every common kind of part."""
    return [
        ModelRequest(
            parts=[
                SystemPromptPart('You sell seats.', timestamp=WHEN),
                UserPromptPart(
                    [
                        'Two seats, see',
                        ImageUrl('https://example.com/plan.png'),
                        # written as `BinaryContent`; image data loads as a `BinaryImage` since pydantic-ai 2.33
                        BinaryImage(data=b'\x89PNG', media_type='image/png'),
                    ],
                    timestamp=WHEN,
                ),
            ],
            instructions='Be brief.',
        ),
        ModelResponse(
            parts=[
                ThinkingPart('The user wants two seats.', signature='sig-1'),
                TextPart('Holding them.'),
                ToolCallPart('hold_seat', {'seat': '1A'}, 'seat-1A'),
            ],
            usage=RequestUsage(input_tokens=120, output_tokens=30),
            model_name='scripted',
            timestamp=WHEN,
            provider_name='function',
            provider_response_id='resp-1',
            finish_reason='tool_call',
        ),
        ModelRequest(
            parts=[
                ToolReturnPart('hold_seat', '1A held', 'seat-1A', timestamp=WHEN),
                RetryPromptPart('seat must be a string', tool_name='hold_seat', tool_call_id='seat-x', timestamp=WHEN),
            ]
        ),
        ModelResponse(parts=[TextPart('Done.')], model_name='scripted', timestamp=WHEN),
    ]


async def write_runs(folder: Path) -> None:
    for make in (
        lambda run_id: SqliteStatePersistence(folder / 'runs.db', run_id=run_id),
        lambda run_id: FileStatePersistence(folder / 'runs' / f'{run_id}.json'),
    ):
        async with make(RUN_IDS['finished']) as persistence:
            await seat_agent.run('two seats', persistence=persistence)
        async with make(RUN_IDS['waiting']) as persistence:
            await refund_agent.run('order A-1001 broke', persistence=persistence)
        crash_points.add('1B')
        try:
            async with make(RUN_IDS['interrupted']) as persistence:
                await seat_agent.run('two seats', persistence=persistence)
        except ProcessKilled:
            pass
        else:  # pragma: no cover
            raise AssertionError('the interrupted run was not interrupted')


def main(version: str) -> None:
    folder = Path(__file__).parent.parent / 'tests/agent/stored' / version
    if folder.exists():
        raise SystemExit(f'{folder} exists: fixtures of a version are written once and never rewritten')
    folder.mkdir(parents=True)
    (folder / 'messages.json').write_bytes(ModelMessagesTypeAdapter.dump_json(history(), indent=2))
    (folder / 'runs').mkdir()
    anyio.run(write_runs, folder)
    for lock in (folder / 'runs').glob('*.edgewise-lock'):
        lock.unlink()
    print(f'wrote {folder}')


if __name__ == '__main__':
    main(sys.argv[1])
