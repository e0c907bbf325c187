"""`LocalWorkspace` and the capabilities' `get_workspace` hook: what a run's tools get as `ctx.workspace`, over real
temporary directories and subprocesses; and `RunContext.tool_name_for_kind`."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from edgewise.agent import Agent, RunContext, Tool, UserError
from edgewise.agent.capabilities import AbstractCapability, LocalWorkspace, PrefixTools, Toolset
from edgewise.agent.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolKind, ToolReturnPart
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.tools import ToolDefinition
from edgewise.agent.toolsets import FunctionToolset
from edgewise.agent.workspaces import (
    LocalWorkspaceBackend,
    ReadOnlyWorkspace,
    Workspace,
    WorkspaceBackend,
    WorkspaceError,
    WorkspaceRef,
)

pytestmark = pytest.mark.anyio


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A temporary directory by its real path (the one a workspace reports)."""
    return tmp_path.resolve()


def _calls_then_answers(tool_name: str, args: dict[str, Any] | None = None) -> FunctionModel:
    """A model that calls `tool_name` once, then answers with what the tool returned."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returns = [p for m in messages for p in getattr(m, 'parts', ()) if isinstance(p, ToolReturnPart)]
        if returns:
            return ModelResponse(parts=[TextPart(str(returns[-1].content))])
        return ModelResponse(parts=[ToolCallPart(tool_name, args or {})])

    return FunctionModel(respond)


async def _use_workspace(ctx: RunContext[None]) -> str:
    """Write a file through the workspace, then read it back through a command."""
    try:
        await ctx.workspace.write_text('made-by-tool.txt', 'hello')
        result = await ctx.workspace.run(['cat', 'made-by-tool.txt'])
    except WorkspaceError as error:
        return f'{type(error).__name__}: {error}'
    return f'{result.stdout} in {await ctx.workspace.working_dir()}'


async def test_local_workspace_gives_tools_its_directory(workdir: Path) -> None:
    agent = Agent(_calls_then_answers('use'), tools=[Tool(_use_workspace, name='use')])
    result = await agent.run('go', capabilities=[LocalWorkspace(workdir)])
    assert result.output == f'hello in {workdir}'
    assert (workdir / 'made-by-tool.txt').read_text() == 'hello'


async def test_read_only_local_workspace_refuses_the_tool_s_write(workdir: Path) -> None:
    agent = Agent(_calls_then_answers('use'), tools=[Tool(_use_workspace, name='use')])
    result = await agent.run('go', capabilities=[LocalWorkspace(workdir, read_only=True)])
    assert result.output.startswith('WorkspaceReadOnlyError: This workspace is read-only')
    assert not (workdir / 'made-by-tool.txt').exists()


async def test_without_a_workspace_capability_the_workspace_says_how_to_attach_one() -> None:
    seen: list[bool] = []

    async def probe(ctx: RunContext[None]) -> str:
        seen.append(ctx.workspace.attached)
        return await _use_workspace(ctx)

    agent = Agent(_calls_then_answers('probe'), tools=[Tool(probe, name='probe')])
    result = await agent.run('go')
    assert seen == [False]
    assert result.output.startswith('WorkspaceUnavailableError: No workspace is attached to this run.')
    assert 'LocalWorkspace(path)' in result.output


async def test_the_workspace_policy_and_authority_reach_the_run(workdir: Path) -> None:
    seen: list[tuple[bool, str, WorkspaceRef | None]] = []

    async def probe(ctx: RunContext[None]) -> str:
        seen.append((ctx.workspace.read_only, ctx.workspace.authority, ctx.workspace.ref))
        return 'ok'

    capability = LocalWorkspace(workdir, read_only=True, authority='user', path_authority={'~/notes': 'none'})
    agent = Agent(_calls_then_answers('probe'), tools=[Tool(probe, name='probe')], capabilities=[capability])
    await agent.run('go')
    assert seen == [(True, 'user', WorkspaceRef(provider='local', id=str(workdir)))]
    assert capability.path_authority == {str(Path.home() / 'notes'): 'none'}


async def test_local_workspace_pins_its_directory_and_keeps_env_out_of_its_repr(
    workdir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(workdir)
    capability: LocalWorkspace[None] = LocalWorkspace('.', env={'API_TOKEN': 'hunter2'})
    assert capability.working_dir == str(workdir)
    assert 'hunter2' not in repr(capability)


async def test_local_workspace_serves_only_its_own_ref(workdir: Path) -> None:
    capability: LocalWorkspace[None] = LocalWorkspace(workdir)
    ctx = RunContext(deps=None, model=FunctionModel(lambda m, i: ModelResponse(parts=[])), usage=None)  # type: ignore[arg-type]
    assert capability.get_workspace(ctx, ref=WorkspaceRef(provider='local', id='/elsewhere')) is None
    own = capability.get_workspace(ctx, ref=WorkspaceRef(provider='local', id=str(workdir)))
    assert isinstance(own, LocalWorkspaceBackend)
    assert isinstance(LocalWorkspace(workdir, read_only=True).get_workspace(ctx, ref=None), ReadOnlyWorkspace)


@dataclass
class _Supplies(AbstractCapability[Any]):
    """A capability that supplies a given backend."""

    backend: WorkspaceBackend | None

    def get_workspace(self, ctx: RunContext[Any], *, ref: WorkspaceRef | None) -> WorkspaceBackend | None:
        return self.backend


async def test_the_first_capability_to_supply_a_workspace_wins(workdir: Path) -> None:
    (workdir / 'first').mkdir()
    (workdir / 'second').mkdir()
    seen: list[str] = []

    async def probe(ctx: RunContext[None]) -> str:
        seen.append(await ctx.workspace.working_dir())
        return 'ok'

    capabilities: list[AbstractCapability[Any]] = [
        _Supplies(None),
        _Supplies(LocalWorkspaceBackend(workdir / 'first')),
        LocalWorkspace(workdir / 'second'),
    ]
    agent = Agent(_calls_then_answers('probe'), tools=[Tool(probe, name='probe')], capabilities=capabilities)
    await agent.run('go')
    assert seen == [str(workdir / 'first')]


async def test_a_wrapper_capability_hands_get_workspace_over(workdir: Path) -> None:
    seen: list[str] = []

    async def probe(ctx: RunContext[None]) -> str:
        seen.append(await ctx.workspace.working_dir())
        return 'ok'

    wrapped = PrefixTools(wrapped=LocalWorkspace(workdir), prefix='ws')
    agent = Agent(_calls_then_answers('probe'), tools=[Tool(probe, name='probe')], capabilities=[wrapped])
    await agent.run('go')
    assert seen == [str(workdir)]


async def test_a_workspace_capability_made_in_for_run_is_asked_after_it(workdir: Path) -> None:
    seen: list[tuple[bool, str]] = []

    @dataclass
    class MadePerRun(AbstractCapability[Any]):
        async def for_run(self, ctx: RunContext[Any]) -> AbstractCapability[Any]:
            seen.append((ctx.workspace.attached, 'for_run'))
            return LocalWorkspace(workdir)

    async def probe(ctx: RunContext[None]) -> str:
        seen.append((ctx.workspace.attached, await ctx.workspace.working_dir()))
        return 'ok'

    agent = Agent(_calls_then_answers('probe'), tools=[Tool(probe, name='probe')], capabilities=[MadePerRun()])
    await agent.run('go')
    assert seen == [(False, 'for_run'), (True, str(workdir))]


async def test_a_workspace_chosen_before_for_run_is_what_for_run_sees(workdir: Path) -> None:
    seen: list[Workspace] = []

    @dataclass
    class Reads(AbstractCapability[Any]):
        async def for_run(self, ctx: RunContext[Any]) -> AbstractCapability[Any]:
            seen.append(ctx.workspace)
            return Reads()

    answer = FunctionModel(lambda messages, info: ModelResponse(parts=[TextPart('done')]))
    await Agent(answer, capabilities=[LocalWorkspace(workdir), Reads()]).run('go')
    assert [await w.working_dir() for w in seen] == [str(workdir)]


LOOKUP = ToolKind('edgewise_tests.workspace', 'lookup')


async def test_tool_name_for_kind_finds_a_renamed_tool() -> None:
    answers: list[str | None] = []

    async def set_kind(ctx: RunContext[None], tool_def: ToolDefinition) -> ToolDefinition:
        return replace(tool_def, tool_kind=LOOKUP.id)

    def lookup() -> str:
        return 'found'

    async def probe(ctx: RunContext[None]) -> str:
        answers.extend([ctx.tool_name_for_kind(LOOKUP), ctx.tool_name_for_kind(LOOKUP.id)])
        answers.append(ctx.tool_name_for_kind('edgewise_tests.workspace.other'))
        return 'ok'

    toolset = FunctionToolset([Tool(lookup, prepare=set_kind)])
    agent = Agent(
        _calls_then_answers('probe'),
        tools=[Tool(probe, name='probe')],
        capabilities=[PrefixTools(wrapped=Toolset(toolset), prefix='inv')],
    )
    await agent.run('go')
    assert answers == ['inv_lookup', 'inv_lookup', None]


async def test_tool_name_for_kind_is_none_without_tools() -> None:
    ctx = RunContext(deps=None, model=FunctionModel(lambda m, i: ModelResponse(parts=[])), usage=None)  # type: ignore[arg-type]
    assert ctx.tool_name_for_kind(LOOKUP) is None


def _probe_tool(seen: list[str]) -> Tool[object]:
    async def probe(ctx: RunContext[object]) -> str:
        seen.append(await ctx.workspace.working_dir())
        return 'ok'

    return Tool(probe, name='probe')


async def test_a_backend_given_to_the_run_is_its_workspace(workdir: Path) -> None:
    (workdir / 'given').mkdir()
    seen: list[str] = []
    agent = Agent(_calls_then_answers('probe'), tools=[_probe_tool(seen)], capabilities=[LocalWorkspace(workdir)])
    await agent.run('go', workspace=LocalWorkspaceBackend(workdir / 'given'))
    await agent.run('go', workspace=ReadOnlyWorkspace(Workspace(LocalWorkspaceBackend(workdir / 'given'))))
    assert seen == [str(workdir / 'given')] * 2


async def test_a_ref_given_to_the_run_is_reached_through_the_capabilities(workdir: Path) -> None:
    seen: list[str] = []
    agent = Agent(_calls_then_answers('probe'), tools=[_probe_tool(seen)], capabilities=[LocalWorkspace(workdir)])
    await agent.run('go', workspace=WorkspaceRef(provider='local', id=str(workdir)))
    await agent.run('go', workspace='new')
    assert seen == [str(workdir)] * 2
    with pytest.raises(UserError, match="none of the agent's workspace capabilities reaches it"):
        await agent.run('go', workspace=WorkspaceRef(provider='local', id='/somewhere/else'))


async def test_a_ref_or_new_without_a_workspace_capability_is_refused() -> None:
    agent = Agent(_calls_then_answers('probe'), tools=[_probe_tool([])])
    with pytest.raises(UserError, match='no capability of the agent supplies workspaces'):
        await agent.run('go', workspace=WorkspaceRef(provider='sandbox', id='abc'))
    with pytest.raises(UserError, match="`workspace='new'` needs a capability"):
        await agent.run('go', workspace='new')


async def test_a_capability_that_answers_a_ref_with_another_workspace_is_an_error(workdir: Path) -> None:
    agent = Agent(_calls_then_answers('probe'), capabilities=[_Supplies(LocalWorkspaceBackend(workdir))])
    with pytest.raises(UserError, match='supplied another one'):
        await agent.run('go', workspace=WorkspaceRef(provider='local', id='/other'))


async def test_workspace_takes_only_backends_refs_and_new(workdir: Path) -> None:
    agent = Agent(_calls_then_answers('probe'))
    with pytest.raises(UserError, match=r'is a capability: give it in `capabilities=\[\.\.\.\]`'):
        await agent.run('go', workspace=LocalWorkspace(workdir))  # type: ignore[call-overload]
    with pytest.raises(UserError, match='for a directory of this machine, give `LocalWorkspaceBackend\\(path\\)`'):
        await agent.run('go', workspace=str(workdir))  # type: ignore[call-overload]
