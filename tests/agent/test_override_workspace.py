"""`Agent.override(workspace=...)` (pydantic-ai 2.68): a workspace for every run started inside the block, in place
of a run's own `workspace=` argument; it takes what `workspace=` takes, and the block's end restores what was before."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from edgewise.agent import Agent, RunContext, UserError
from edgewise.agent.capabilities import LocalWorkspace
from edgewise.agent.models.test import TestModel
from edgewise.agent.workspaces import LocalWorkspaceBackend, WorkspaceRef
from edgewise.graph.persistence.store import persistence_from_url

pytestmark = pytest.mark.anyio


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    first, second = tmp_path.resolve() / 'first', tmp_path.resolve() / 'second'
    first.mkdir()
    second.mkdir()
    return first, second


def ref(path: Path) -> WorkspaceRef:
    return WorkspaceRef(provider='local', id=str(path))


async def test_every_run_in_the_block_works_in_the_workspace_given(places: tuple[Path, Path]) -> None:
    first, _ = places
    seen: list[WorkspaceRef | None] = []
    agent = Agent(TestModel())

    @agent.tool
    async def probe(ctx: RunContext[None]) -> str:
        seen.append(ctx.workspace.ref)
        return 'ok'

    with agent.override(workspace=LocalWorkspaceBackend(first)):
        ran = await agent.run('hi')
        async with agent.run_stream('hi') as streamed:
            await streamed.get_output()
        async with agent.run_stream_events('hi') as events:
            async for _ in events:
                pass
        assert events.result is not None

    assert ran.workspace.ref == ref(first)
    assert streamed.workspace.ref == ref(first)
    assert events.result.workspace.ref == ref(first)
    assert seen == [ref(first)] * 3  # the tools' `ctx.workspace` too
    await ran.workspace.write_text('note.txt', 'written')
    assert (first / 'note.txt').read_text() == 'written'


async def test_the_override_wins_over_the_runs_own_workspace(places: tuple[Path, Path]) -> None:
    first, second = places
    agent = Agent(TestModel())
    with agent.override(workspace=LocalWorkspaceBackend(first)):
        result = await agent.run('hi', workspace=LocalWorkspaceBackend(second))
    assert result.workspace.ref == ref(first)


async def test_leaving_the_block_restores_the_runs_own_choice(places: tuple[Path, Path]) -> None:
    first, second = places
    agent = Agent(TestModel())
    with agent.override(workspace=LocalWorkspaceBackend(first)):
        pass
    assert not (await agent.run('hi')).workspace.attached
    assert (await agent.run('hi', workspace=LocalWorkspaceBackend(second))).workspace.ref == ref(second)


async def test_an_inner_override_wins_until_its_block_ends(places: tuple[Path, Path]) -> None:
    first, second = places
    agent = Agent(TestModel())
    with agent.override(workspace=LocalWorkspaceBackend(first)):
        with agent.override(workspace=LocalWorkspaceBackend(second)):
            inner = await agent.run('hi')
        outer = await agent.run('hi')
    assert (inner.workspace.ref, outer.workspace.ref) == (ref(second), ref(first))


async def test_other_overrides_leave_the_workspace_alone(places: tuple[Path, Path]) -> None:
    first, second = places
    agent = Agent(TestModel())
    with agent.override(workspace=LocalWorkspaceBackend(first)), agent.override(name='renamed'):
        result = await agent.run('hi', workspace=LocalWorkspaceBackend(second))
    assert result.workspace.ref == ref(first)


async def test_an_override_of_none_drops_the_runs_own_workspace(places: tuple[Path, Path]) -> None:
    _, second = places
    agent = Agent(TestModel())
    with agent.override(workspace=None):
        result = await agent.run('hi', workspace=LocalWorkspaceBackend(second))
    assert not result.workspace.attached


async def test_a_ref_or_new_is_reached_through_the_capabilities(places: tuple[Path, Path]) -> None:
    first, second = places
    agent = Agent(TestModel(), capabilities=[LocalWorkspace(first)])
    with agent.override(workspace=ref(first)):
        assert (await agent.run('hi', workspace='new')).workspace.ref == ref(first)
    with agent.override(workspace='new'):
        assert (await agent.run('hi')).workspace.ref == ref(first)
    with (
        agent.override(workspace=ref(second)),
        pytest.raises(UserError, match="none of the agent's workspace capabilities reaches it"),
    ):
        await agent.run('hi')


async def test_a_value_a_run_would_refuse_is_refused_by_override() -> None:
    agent = Agent(TestModel())
    a_path: Any = '/tmp/somewhere'
    a_capability: Any = LocalWorkspace('.')
    with pytest.raises(UserError, match='`workspace=` takes a backend'), agent.override(workspace=a_path):
        pass
    with pytest.raises(UserError, match='is a capability'), agent.override(workspace=a_capability):
        pass
    assert not (await agent.run('hi')).workspace.attached  # nothing was left overridden


def test_run_sync_in_the_block_works_in_the_workspace_given(places: tuple[Path, Path]) -> None:
    first, _ = places
    agent = Agent(TestModel())
    with agent.override(workspace=LocalWorkspaceBackend(first)):
        result = agent.run_sync('hi')
    assert result.workspace.ref == ref(first)


async def _stored(agent: Agent[None, str], url: str) -> None:
    """A run of `agent` stored in `url` (as run `r`) with its model request next."""
    async with persistence_from_url(url, 'r') as persistence, agent.iter('hi', persistence=persistence) as run:
        await run.next()


async def test_a_stored_run_resumed_in_the_block_works_in_the_workspace_given(
    places: tuple[Path, Path], tmp_path: Path
) -> None:
    first, _ = places
    seen: list[WorkspaceRef | None] = []
    agent = Agent(TestModel())

    @agent.tool
    async def probe(ctx: RunContext[None]) -> str:
        seen.append(ctx.workspace.ref)
        return 'ok'

    url = f'sqlite:///{tmp_path / "runs.db"}'
    await _stored(agent, url)
    with agent.override(workspace=LocalWorkspaceBackend(first)):
        async with persistence_from_url(url, 'r') as persistence:
            result = await agent.resume(persistence)
    assert seen == [ref(first)]
    assert result.workspace.ref == ref(first)


async def test_a_stored_run_resumed_with_a_ref_no_capability_reaches_is_refused(
    places: tuple[Path, Path], tmp_path: Path
) -> None:
    first, _ = places
    url = f'sqlite:///{tmp_path / "runs.db"}'
    without = Agent(TestModel())
    await _stored(without, url)
    with without.override(workspace=ref(first)), pytest.raises(UserError, match='no capability of the agent supplies'):
        async with persistence_from_url(url, 'r') as persistence:
            await without.resume(persistence)

    with_capability = Agent(TestModel(), capabilities=[LocalWorkspace(first)])
    with with_capability.override(workspace=ref(first)):
        async with persistence_from_url(url, 'r') as persistence:
            assert (await with_capability.resume(persistence)).workspace.ref == ref(first)
