"""pydantic-ai 2.68's `ModelResponse.canonical_system`, `.workspace_ref` and `.history_digest`: how they serialize
(histories stored before them load; histories with them round-trip), the repr, the `workspace_ref` a run records and
the one it continues in, and the UI adapters' `strip_workspace_refs`."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from edgewise.agent import Agent, UserError
from edgewise.agent.capabilities import LocalWorkspace
from edgewise.agent.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    TextPart,
    UserPromptPart,
)
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.test import TestModel
from edgewise.agent.ui.ag_ui import AGUIAdapter
from edgewise.agent.workspaces import WorkspaceRef

pytestmark = pytest.mark.anyio

STAMP = datetime(2026, 1, 1, tzinfo=UTC)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    return tmp_path.resolve()


def _responses(messages: list[ModelMessage]) -> list[ModelResponse]:
    return [m for m in messages if isinstance(m, ModelResponse)]


def test_the_new_fields_left_at_none_are_not_in_the_repr() -> None:
    response = ModelResponse([TextPart('hi')], model_name='m', timestamp=STAMP)
    assert repr(response) == (
        "ModelResponse(parts=[TextPart(content='hi')], usage=RequestUsage(), model_name='m', "
        'timestamp=datetime.datetime(2026, 1, 1, 0, 0, tzinfo=datetime.timezone.utc))'
    )


def test_the_new_fields_are_in_the_repr_when_set() -> None:
    response = ModelResponse(
        [TextPart('hi')],
        timestamp=STAMP,
        provider_name='openai-codex',
        canonical_system='openai',
        workspace_ref=WorkspaceRef(provider='local', id='/w'),
        history_digest='abc',
    )
    assert repr(response) == (
        "ModelResponse(parts=[TextPart(content='hi')], usage=RequestUsage(), "
        'timestamp=datetime.datetime(2026, 1, 1, 0, 0, tzinfo=datetime.timezone.utc), '
        "provider_name='openai-codex', canonical_system='openai', "
        "workspace_ref=WorkspaceRef(provider='local', id='/w'), history_digest='abc')"
    )


def test_a_dump_writes_the_new_fields_as_null_as_pydantic_ai_2_68_does() -> None:
    (dumped,) = ModelMessagesTypeAdapter.dump_python([ModelResponse([TextPart('hi')], timestamp=STAMP)], mode='json')
    assert {key: dumped[key] for key in ('canonical_system', 'workspace_ref', 'history_digest')} == {
        'canonical_system': None,
        'workspace_ref': None,
        'history_digest': None,
    }
    keys = list(dumped)
    assert keys.index('provider_url') + 1 == keys.index('canonical_system')
    assert keys.index('metadata') + 1 == keys.index('workspace_ref') == keys.index('history_digest') - 1


def test_a_history_stored_before_the_new_fields_loads() -> None:
    stored = [
        {
            'parts': [{'content': 'hi', 'part_kind': 'text'}],
            'model_name': 'gpt-5',
            'timestamp': '2026-01-01T00:00:00Z',
            'kind': 'response',
            'provider_name': 'openai',
        }
    ]
    (response,) = ModelMessagesTypeAdapter.validate_python(stored)
    assert isinstance(response, ModelResponse)
    assert (response.canonical_system, response.workspace_ref, response.history_digest) == (None, None, None)


def test_a_history_with_the_new_fields_round_trips() -> None:
    response = ModelResponse(
        [TextPart('hi')],
        timestamp=STAMP,
        provider_name='openai-codex',
        canonical_system='openai',
        workspace_ref=WorkspaceRef(provider='local', id='/w'),
        history_digest='d' * 64,
    )
    dumped = ModelMessagesTypeAdapter.dump_json([response])
    assert json.loads(dumped)[0]['workspace_ref'] == {'provider': 'local', 'id': '/w'}
    assert ModelMessagesTypeAdapter.validate_json(dumped) == [response]


async def test_a_run_records_its_workspace_on_its_responses(workdir: Path) -> None:
    agent = Agent(TestModel(), capabilities=[LocalWorkspace(workdir)])
    result = await agent.run('hi')
    (response,) = _responses(result.all_messages())
    assert response.workspace_ref == WorkspaceRef(provider='local', id=str(workdir))


async def test_a_run_continuing_a_history_is_offered_its_workspace(workdir: Path) -> None:
    agent = Agent(TestModel(), capabilities=[LocalWorkspace(workdir)])
    first = await agent.run('hi')
    second = await agent.run('again', message_history=first.all_messages())
    assert [r.workspace_ref for r in _responses(second.all_messages())] == [
        WorkspaceRef(provider='local', id=str(workdir))
    ] * 2


async def test_a_history_workspace_no_capability_reaches_is_refused_unless_a_new_one_is_asked_for(
    workdir: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    elsewhere = tmp_path_factory.mktemp('elsewhere').resolve()
    history = (await Agent(TestModel(), capabilities=[LocalWorkspace(elsewhere)]).run('hi')).all_messages()
    agent = Agent(TestModel(), capabilities=[LocalWorkspace(workdir)])
    with pytest.raises(UserError) as raised:
        await agent.run('again', message_history=history)
    assert str(raised.value) == (
        f"The message history continues in workspace `local:{elsewhere}`, but none of the agent's workspace "
        "capabilities reaches it: pass `workspace='new'` to start in a new one, or the workspace to continue in as "
        '`workspace=`.'
    )
    fresh = await agent.run('again', message_history=history, workspace='new')
    assert _responses(fresh.new_messages())[0].workspace_ref == WorkspaceRef(provider='local', id=str(workdir))


async def test_an_agent_without_a_workspace_carries_the_historys_forward() -> None:
    ref = WorkspaceRef(provider='sandbox', id='box-1')
    history: list[ModelMessage] = [
        ModelRequest([UserPromptPart('hi')]),
        ModelResponse([TextPart('hello')], workspace_ref=ref),
    ]
    result = await Agent(TestModel()).run('summarize', message_history=history)
    assert [r.workspace_ref for r in _responses(result.new_messages())] == [ref]


async def test_a_run_that_makes_no_response_leaves_the_earlier_ones_ref(workdir: Path) -> None:
    ref = WorkspaceRef(provider='sandbox', id='box-1')
    history: list[ModelMessage] = [
        ModelRequest([UserPromptPart('hi')]),
        ModelResponse([TextPart('hello')], workspace_ref=ref),
    ]

    def down(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise ConnectionError('the model is down')

    with pytest.raises(ConnectionError):
        await Agent(FunctionModel(down)).run('again', message_history=history)
    assert history[-1].workspace_ref == ref  # type: ignore[union-attr]


def _client_history() -> list[ModelMessage]:
    ref = WorkspaceRef(provider='local', id='/etc')
    return [ModelRequest([UserPromptPart('hi')]), ModelResponse([TextPart('hello')], workspace_ref=ref)]


@pytest.mark.parametrize(('strip', 'kept'), [(True, None), (False, WorkspaceRef(provider='local', id='/etc'))])
def test_ui_adapters_reset_the_workspace_refs_a_client_sends(strip: bool, kept: WorkspaceRef | None) -> None:
    from ag_ui.core import RunAgentInput

    run_input = RunAgentInput(
        thread_id='t', run_id='r', state={}, messages=[], tools=[], context=[], forwarded_props=None
    )
    adapter = AGUIAdapter[Any, Any](Agent(TestModel()), run_input, strip_workspace_refs=strip)
    sanitized = adapter.sanitize_messages(_client_history())
    assert _responses(sanitized)[0].workspace_ref == kept
