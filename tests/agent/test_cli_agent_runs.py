"""`edgewise runs` on agent runs whose tools need deps, and on runs given the wrong kind of target (the command
run as a subprocess, on a store written by an agent in a process of its own)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

EDGEWISE = str(Path(sys.executable).with_name('edgewise'))
STORE = 'sqlite:///runs.db'

MODULE = """
from dataclasses import dataclass
import sys

import anyio

from edgewise.agent import Agent, RunContext
from edgewise.agent.messages import ModelResponse, TextPart, ToolCallPart
from edgewise.agent.models.function import FunctionModel
from edgewise.graph import BaseNode, End, Graph, GraphRunContext
from edgewise.graph.persistence.sqlite import SqliteStatePersistence


@dataclass
class Deps:
    prefix: str


def answer(messages, info):
    if len(messages) == 1:
        return ModelResponse([ToolCallPart('greet', {'name': 'ann'}, 'g1')])
    return ModelResponse([TextPart(messages[-1].parts[0].content)])


agent = Agent(FunctionModel(answer), deps_type=Deps)


@agent.tool
def greet(ctx: RunContext[Deps], name: str) -> str:
    if ctx.deps.prefix == 'boom':
        raise RuntimeError('the greeting failed')
    return ctx.deps.prefix + name


def make_deps(run_id):
    return Deps(f'hello from {run_id}, ')


def wrong_deps(run_id):
    return 'not deps'


def failing_deps(run_id):
    raise LookupError(f'no settings for {run_id}')


not_callable = 3


@dataclass
class Only(BaseNode[None, None, int]):
    async def run(self, ctx: GraphRunContext[None, None]) -> End[int]:
        return End(1)


graph = Graph(nodes=[Only])


async def main(run_id, prefix):
    async with SqliteStatePersistence('runs.db', run_id) as persistence:
        if prefix == 'graph':
            await graph.initialize(Only(), persistence=persistence)  # stored, not started
            return
        async with agent.iter('hi', deps=Deps(prefix), persistence=persistence) as run:
            await run.next()  # stored with its model request next
            if prefix == 'boom':
                await run.next()
                await run.next()


if __name__ == '__main__':
    try:
        anyio.run(main, *sys.argv[1:])
    except RuntimeError:
        sys.exit(7)
"""


def _edgewise(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [EDGEWISE, 'runs', *args, '--store', STORE], cwd=cwd, capture_output=True, text=True, timeout=60, check=False
    )


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A store with `r1` (an agent run stopped before its model request), `failed` (an agent run whose tool raised)
    and `g1` (a graph run)."""
    (tmp_path / 'greeter.py').write_text(textwrap.dedent(MODULE))
    for run_id, prefix, status in (('r1', 'x', 0), ('failed', 'boom', 7), ('g1', 'graph', 0)):
        made = subprocess.run(
            [sys.executable, 'greeter.py', run_id, prefix], cwd=tmp_path, capture_output=True, timeout=60, check=False
        )
        assert made.returncode == status, made.stderr
    return tmp_path


def test_resume_builds_the_deps_with_the_factory_given_by_deps(store: Path) -> None:
    resumed = _edgewise(store, 'resume', 'r1', 'greeter.py:agent', '--deps', 'greeter.py:make_deps')

    assert (resumed.returncode, resumed.stderr) == (0, '')
    assert "output='hello from r1, ann'" in resumed.stdout.splitlines()[-1]


def test_resume_of_an_agent_that_needs_deps_says_how_to_give_them(store: Path) -> None:
    resumed = _edgewise(store, 'resume', 'r1', 'greeter.py:agent')

    assert (resumed.returncode, resumed.stdout) == (1, '')
    assert resumed.stderr == (
        'edgewise: error: The agent greeter.py:agent needs deps (a Deps) to resume run r1: give '
        '`--deps MODULE:FACTORY`, a function that takes the run id and returns them. Nothing was changed.\n'
    )


@pytest.mark.parametrize(
    ('factory', 'message'),
    [
        ('greeter.py:wrong_deps', '--deps greeter.py:wrong_deps returned a str, not the Deps the agent needs.'),
        ('greeter.py:failing_deps', '--deps greeter.py:failing_deps raised LookupError: no settings for r1.'),
        ('greeter.py:not_callable', '--deps greeter.py:not_callable is a int, not a function of the run id.'),
    ],
)
def test_deps_that_do_not_fit_are_refused_and_change_nothing(store: Path, factory: str, message: str) -> None:
    resumed = _edgewise(store, 'resume', 'r1', 'greeter.py:agent', '--deps', factory)

    assert resumed.returncode == 1
    assert resumed.stderr == f'edgewise: error: {message} Nothing was changed.\n'
    assert ' waiting ' in _edgewise(store, 'list').stdout


def test_a_deps_factory_that_does_not_import_is_named(store: Path) -> None:
    resumed = _edgewise(store, 'resume', 'r1', 'greeter.py:agent', '--deps', 'greeter.py:nothing')

    assert (resumed.returncode, resumed.stderr) == (
        1,
        "edgewise: error: Module 'greeter.py' has no attribute 'nothing'.\n",
    )
    malformed = _edgewise(store, 'resume', 'r1', 'greeter.py:agent', '--deps', 'make_deps')
    assert malformed.stderr.startswith("edgewise: error: 'make_deps' is not MODULE:FACTORY")


def test_an_agent_run_given_a_graph_and_a_graph_run_given_an_agent_say_so(store: Path) -> None:
    agent_run = _edgewise(store, 'resume', 'r1', 'greeter.py:graph')
    graph_run = _edgewise(store, 'resume', 'g1', 'greeter.py:agent', '--deps', 'greeter.py:make_deps')

    assert agent_run.returncode == graph_run.returncode == 1
    assert agent_run.stderr == (
        'edgewise: error: Run r1 is an agent run: resume it with the agent that ran it (MODULE:AGENT), not with the '
        'graph greeter.py:graph. Nothing was changed.\n'
    )
    assert graph_run.stderr == (
        'edgewise: error: Run g1 is a run of graph graph, not an agent run: resume it with its graph (MODULE:GRAPH), '
        'not with the agent greeter.py:agent. Nothing was changed.\n'
    )


def test_show_and_list_of_agent_runs_use_the_same_words_and_the_agent_hints(store: Path) -> None:
    listed = _edgewise(store, 'list')
    shown = _edgewise(store, 'show', 'r1')
    failed = _edgewise(store, 'show', 'failed')

    statuses = {line.split()[0]: line.split()[2] for line in listed.stdout.splitlines()[1:]}
    assert statuses == {'r1': 'waiting', 'failed': 'failed', 'g1': 'waiting'}
    assert shown.stdout.startswith(f'Run r1 in {STORE}: waiting, 2 snapshots\n')
    assert shown.stdout.splitlines()[-1] == (
        f'Waiting: node ModelRequestNode (step 2) runs next; continue with `edgewise runs resume r1 MODULE:AGENT '
        f'--store {STORE}` (and `--deps MODULE:FACTORY` when its tools need deps).'
    )
    assert (failed.returncode, failed.stderr) == (0, '')
    assert failed.stdout.startswith(f'Run failed in {STORE}: failed, 3 snapshots\n')
