"""`SystemOneModel` against a real HTTP server on 127.0.0.1 speaking the `/v1/systemone` API."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field

from edgewise.agent import Agent
from edgewise.agent.exceptions import ModelHTTPError, UnexpectedModelBehavior, UserError
from edgewise.agent.messages import ModelResponse
from edgewise.agent.models import infer_model
from edgewise.agent.models.decision import DecisionRequest, NoulQuestion, UnfillableRoute
from edgewise.agent.models.system_one import SystemOneModel
from edgewise.agent.providers.system_one import SystemOneProvider

from .conftest import LocalServer, Reply

pytestmark = pytest.mark.anyio

SECRET = 'sk-system-one-secret-7731'


@pytest.fixture(autouse=True)
def _no_provider_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ('SYSTEM_ONE_BASE_URL', 'SYSTEM_ONE_API_KEY'):
        monkeypatch.delenv(name, raising=False)


def _answered(answers: dict[str, Any], model: str = 'clm-1.2') -> Reply:
    return Reply(200, {'model': model, 'answers': answers, 'usage': {'input_tokens': 31, 'output_tokens': 2}})


def _choice(choice: str, *options: str) -> dict[str, Any]:
    return {
        'type': 'choice',
        'choice': choice,
        'confidence': 0.9,
        'probabilities': {o: 0.9 if o == choice else round(0.1 / (len(options) - 1), 2) for o in options},
    }


def _model(server: LocalServer, **kwargs: Any) -> SystemOneModel:
    return SystemOneModel('clm-latest', provider=SystemOneProvider(base_url=server.url, api_key=SECRET), **kwargs)


async def test_a_bool_agent_asks_one_yes_no_over_http(local_server: LocalServer) -> None:
    local_server.script(_answered({'response': {'type': 'noul', 'noul': 0.83}}))
    async with _model(local_server) as model:
        result = await Agent(model, output_type=bool, instructions='Would running this destroy data?').run('rm -rf /')
    assert result.output is True
    (received,) = local_server.received
    assert received['path'] == '/v1/systemone'
    assert received['headers']['authorization'] == f'Bearer {SECRET}'
    assert received['body'] == {
        'state': 'rm -rf /',
        'model': 'clm-latest',
        'questions': {'response': {'type': 'noul', 'instructions': 'Would running this destroy data?'}},
    }
    response = result.all_messages()[-2]
    assert (response.model_name, response.provider_name) == ('clm-1.2', 'system-one')  # type: ignore[union-attr]
    assert result.usage.input_tokens == 31
    assert result.usage.output_tokens == 2


async def test_a_model_name_runs_with_the_provider_from_the_environment(
    local_server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv('SYSTEM_ONE_BASE_URL', local_server.url.removesuffix('/v1'))  # the model adds `/v1`
    local_server.script(_answered({'response': _choice('refund', 'refund', 'question')}))
    model = infer_model('system-one:clm-latest')
    assert isinstance(model, SystemOneModel)
    assert model.model_name == 'clm-latest'
    async with model:
        result = await Agent(model, output_type=Literal['refund', 'question']).run('Give my money back')  # type: ignore[arg-type]
    assert result.output == 'refund'
    (received,) = local_server.received
    assert received['path'] == '/v1/systemone'
    assert 'authorization' not in received['headers']  # a local server needs no key
    # The API requires `instructions` on every question: a pick-one that says nothing else gets a generic one.
    assert received['body']['questions'] == {
        'response': {
            'type': 'choice',
            'criteria': {'refund': None, 'question': None},
            'instructions': 'Which of these applies?',
        }
    }


class Handling(BaseModel):
    """How to handle a shell command."""

    irreversible: bool = Field(description='Would running this destroy data or leak secrets?')
    risk: Annotated[float, Field(ge=0, le=1, description='How likely is it to break something?')]
    area: Literal['files', 'network', 'processes'] = Field(description='What does it touch?')


async def test_a_model_with_several_decidable_fields(local_server: LocalServer) -> None:
    local_server.script(
        _answered(
            {
                'irreversible': {'type': 'noul', 'noul': 0.2},
                'risk': {'type': 'noul', 'noul': 0.35},
                'area': _choice('files', 'files', 'network', 'processes'),
            }
        )
    )
    model = _model(local_server, settings={'temperature': 0.2, 'extra_body': {'seed_hint': 7}})
    async with model:
        result = await Agent(model, output_type=Handling).run(
            'cp a b', model_settings={'extra_headers': {'x-team': 'ops'}}
        )
    assert result.output == Handling(irreversible=False, risk=0.35, area='files')
    (received,) = local_server.received
    body = received['body']
    assert (body['temperature'], body['seed_hint']) == (0.2, 7)
    assert received['headers']['x-team'] == 'ops'
    assert body['questions']['risk'] == {
        'type': 'noul',
        'instructions': {
            'field': 'risk',
            'question': 'How likely is it to break something?',
            'goal': 'How to handle a shell command.',
        },
    }
    response = result.all_messages()[-2]
    assert isinstance(response, ModelResponse)
    assert response.provider_details is not None
    assert response.provider_details['confidence'] == {'irreversible': 0.6, 'area': 0.9}


def _tooled(model: SystemOneModel) -> Agent[None, Handling]:
    agent = Agent(model, output_type=Handling)

    @agent.tool_plain
    def ask_owner(question: str) -> str:
        """Ask the owner of the machine."""
        return 'yes'

    return agent


async def test_function_tools_are_routes_and_an_unfillable_pick_is_handed_off(local_server: LocalServer) -> None:
    local_server.script(
        _answered(
            {
                'route': _choice('ask_owner', 'Handling', 'ask_owner'),
                'Handling.irreversible': {'type': 'noul', 'noul': 0.5},
                'Handling.risk': {'type': 'noul', 'noul': 0.5},
                'Handling.area': _choice('files', 'files', 'network', 'processes'),
            }
        )
    )
    with pytest.raises(UnfillableRoute) as caught:
        async with _model(local_server) as model:
            await _tooled(model).run('shutdown now')
    assert caught.value.route == 'ask_owner'
    questions = local_server.received[0]['body']['questions']
    assert questions['route'] == {
        'type': 'choice',
        'criteria': {'Handling': 'How to handle a shell command.', 'ask_owner': 'Ask the owner of the machine.'},
        'instructions': 'Which of these does this call for?',
    }


async def test_an_error_status_is_a_model_http_error_without_the_key(local_server: LocalServer) -> None:
    local_server.script(Reply(401, {'error': f'bad key {SECRET}'}))
    model = _model(local_server)
    with pytest.raises(ModelHTTPError) as caught:
        async with model:
            await Agent(model, output_type=bool, instructions='Angry?').run('x')
    error = caught.value
    assert error.status_code == 401
    assert error.model_name == 'clm-latest'
    assert SECRET not in str(error)
    assert SECRET not in repr(error.body)
    assert SECRET not in repr(model)
    assert len(local_server.received) == 1  # one attempt


@pytest.mark.parametrize(
    ('answers', 'message'),
    [
        ({}, 'answer names do not match the questions'),
        ({'response': {'type': 'noul', 'noul': 1.4}}, "answer 'response' does not match its question"),
        ({'response': {'type': 'score', 'score': 1}}, 'Invalid response from the System One API'),
    ],
)
async def test_an_answer_that_does_not_fit_is_unexpected_behavior(
    local_server: LocalServer, answers: dict[str, Any], message: str
) -> None:
    local_server.script(_answered(answers))
    with pytest.raises(UnexpectedModelBehavior, match=message):
        async with _model(local_server) as model:
            await model.decide(
                DecisionRequest(state='x', questions={'response': NoulQuestion(instructions='Angry?')}), {}
            )


async def test_requests_it_cannot_send_are_user_errors(local_server: LocalServer) -> None:
    from edgewise.agent.messages import BinaryContent

    model = _model(local_server)
    image = BinaryContent(b'\x89PNG', media_type='image/png')
    with pytest.raises(UserError, match='System One does not support image input'):
        await model.decide(DecisionRequest(state='x', questions={}, images=(image,)), {})
    with pytest.raises(UserError, match='`extra_body` must be a mapping'):
        await model.decide(DecisionRequest(state='x', questions={}), {'extra_body': [1]})
    assert local_server.received == []
