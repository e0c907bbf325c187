"""A deprecated argument of a run (`builtin_tools=`, `output_retries=`) is reported at the application's line that
made the run, naming the method it called (`agent.run_sync(...)`), whatever lies between: `run_sync`'s event loop,
`async with`'s context manager, the nodes of the run. Python shows a `DeprecationWarning` by default only when it
points into `__main__`, so a warning pointing at a line of Edgewise would be hidden from a script's author."""

from __future__ import annotations

import inspect
import warnings
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from edgewise.agent import Agent
from edgewise.agent._run.options import pop_deprecated_builtin_tools
from edgewise.agent._warnings import application_caller
from edgewise.agent.messages import ModelMessage, ModelResponse, TextPart
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.native_tools import WebSearchTool

_DEPRECATED: dict[str, Any] = {'output_retries': {'output_retries': 2}, 'builtin_tools': {'builtin_tools': []}}


def _agent() -> Agent[None, str]:
    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse([TextPart('ok')])

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str]:
        yield 'ok'

    return Agent(FunctionModel(answer, stream_function=stream))


def _line_of(marker: str, function: Callable[..., Any]) -> int:
    """The line of `function` holding `marker` (a comment on the line that should be reported)."""
    lines, start = inspect.getsourcelines(function)
    return start + next(i for i, line in enumerate(lines) if f'# {marker}' in line)


def _reported(caught: list[warnings.WarningMessage], argument: str) -> list[tuple[str, int, str]]:
    return [
        (w.filename, w.lineno, str(w.message).split('(')[0])
        for w in caught
        if issubclass(w.category, DeprecationWarning) and f'({argument}=...)' in str(w.message)
    ]


async def _run(agent: Agent[None, str], kwargs: dict[str, Any]) -> None:
    await agent.run('hi', **kwargs)  # here:run


async def _iter(agent: Agent[None, str], kwargs: dict[str, Any]) -> None:
    async with agent.iter('hi', **kwargs) as run:  # here:iter
        async for _ in run:
            pass


async def _run_stream(agent: Agent[None, str], kwargs: dict[str, Any]) -> None:
    async with agent.run_stream('hi', **kwargs) as result:  # here:run_stream
        await result.get_output()


async def _run_stream_events(agent: Agent[None, str], kwargs: dict[str, Any]) -> None:
    async with agent.run_stream_events('hi', **kwargs) as events:
        async for _ in events:  # here:run_stream_events (the run starts with the first event asked for)
            pass


@pytest.mark.anyio
@pytest.mark.parametrize('argument', sorted(_DEPRECATED))
@pytest.mark.parametrize('drive', [_run, _iter, _run_stream, _run_stream_events], ids=lambda f: f.__name__[1:])
async def test_an_async_entry_point_reports_the_applications_line(drive: Any, argument: str) -> None:
    entry = drive.__name__[1:]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        await drive(_agent(), _DEPRECATED[argument])
    assert _reported(caught, argument) == [(__file__, _line_of(f'here:{entry}', drive), f'`agent.{entry}')]


@pytest.mark.parametrize('argument', sorted(_DEPRECATED))
def test_run_sync_reports_the_applications_line_past_its_event_loop(argument: str) -> None:
    agent = _agent()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        agent.run_sync('hi', **_DEPRECATED[argument])  # here:run_sync
    line = _line_of('here:run_sync', test_run_sync_reports_the_applications_line_past_its_event_loop)
    assert _reported(caught, argument) == [(__file__, line, '`agent.run_sync')]


def test_the_warning_is_shown_by_pythons_default_filters_in_main(tmp_path: Any) -> None:
    """The point of it: a script run as `__main__` sees the warning without asking for warnings."""
    import subprocess
    import sys

    script = tmp_path / 'script.py'
    script.write_text(
        'from edgewise.agent import Agent\n'
        'from edgewise.agent.models.test import TestModel\n'
        "Agent(TestModel()).run_sync('hi', output_retries=1)\n"
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=True)
    assert f'{script}:3: PydanticAIDeprecationWarning: `agent.run_sync(output_retries=...)`' in done.stderr


def test_an_explicit_owner_and_stacklevel_are_kept() -> None:
    def constructor(**kwargs: Any) -> Any:
        return pop_deprecated_builtin_tools(kwargs, 'Agent', stacklevel=3)

    with pytest.warns(DeprecationWarning, match=r'`Agent\(builtin_tools=...\)`') as caught:
        assert constructor(builtin_tools=[WebSearchTool()]) == [WebSearchTool()]  # here:constructor
    line = _line_of('here:constructor', test_an_explicit_owner_and_stacklevel_are_kept)
    assert [(w.filename, w.lineno) for w in caught] == [(__file__, line)]


def test_application_caller_is_the_first_frame_outside_the_library() -> None:
    # Called from here, this test's frame is the application's: level 1, no entry point on the way.
    assert application_caller() == (1, None)


@pytest.mark.anyio
async def test_a_run_driven_from_a_library_task_still_warns() -> None:
    """No application frame lies above a run whose task the library started: the warning still comes, pointing at
    what runs the event loop, naming the entry point found."""
    import anyio

    agent = _agent()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        async with anyio.create_task_group() as tg:
            tg.start_soon(_library_task, agent)
    reported = _reported(caught, 'output_retries')
    assert len(reported) == 1
    assert reported[0][0] != __file__
    assert reported[0][2] == '`agent.run'


# Compiled as if it were a file of anyio's: a frame of the event loop's machinery, not the application's.
_namespace: dict[str, Any] = {}
exec(
    compile(
        'async def task(agent):\n    await agent.run("hi", output_retries=1)\n',
        __import__('anyio').__path__[0] + '/_edgewise_test_task.py',
        'exec',
    ),
    _namespace,
)
_library_task = _namespace['task']
