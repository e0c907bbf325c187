"""`DecisionModel` with routes to pick between (tools, output unions): the route question, fields asked beside it or
after it, hand-offs, the state of a turn, streaming."""

from __future__ import annotations

import json
import pickle
from typing import Annotated, Any, Literal

import pytest
from logfire.testing import CaptureLogfire
from pydantic import BaseModel, Field

from edgewise.agent import Agent
from edgewise.agent.exceptions import UnexpectedModelBehavior, UserError
from edgewise.agent.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models.decision import (
    ChoiceQuestion,
    DecisionAnswer,
    DecisionModelSettings,
    DecisionRequest,
    NoulQuestion,
    UnfillableRoute,
    UnsureRoute,
)
from edgewise.agent.models.fallback import FallbackModel
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.tools import ToolDefinition

from ._decision_backend import ScriptedDecisions, answer

pytestmark = pytest.mark.anyio


class Reply(BaseModel):
    """Answer the customer directly."""

    polite: bool = Field(description='Should the reply apologise?')


_LONG = 'word ' * 20_000
"""A prompt past the size where every route's fields are asked beside the pick (about 16,000 tokens)."""


def _agent(model: Any) -> Agent[None, Reply]:
    agent = Agent(model, output_type=Reply)

    @agent.tool_plain
    def refund(full: Annotated[bool, Field(description='Is a full refund asked for?')]) -> str:
        """Refund the order."""
        return 'refunded'

    @agent.tool_plain
    def lookup(order_id: str) -> str:
        """Look the order up."""
        return f'order {order_id}'

    return agent


async def test_a_picked_tool_is_called_with_the_fields_asked_beside_the_pick() -> None:
    model = ScriptedDecisions({'route': ['refund', 'Reply'], 'refund.full': 0.7})
    agent = _agent(model)
    result = await agent.run('I want my money back.')
    assert result.output == Reply(polite=True)
    first, second = model.requests
    assert first.state == 'I want my money back.'
    assert first.questions['route'] == ChoiceQuestion(
        criteria={
            'Reply': 'Answer the customer directly.',
            'refund': 'Refund the order.',
            'lookup': 'Look the order up.',
        },
        instructions='Which of these does this call for?',
    )
    assert first.questions['refund.full'] == NoulQuestion(
        instructions={
            'field': 'full',
            'premise': "If the user's request calls for refund: Refund the order.",
            'question': 'Is a full refund asked for?',
        }
    )
    assert sorted(first.questions) == ['Reply.polite', 'refund.full', 'route']  # `lookup` takes a free-form str
    call = result.all_messages()[1]
    assert isinstance(call, ModelResponse)
    assert isinstance(part := call.parts[0], ToolCallPart)
    assert (part.tool_name, part.args) == ('refund', {'full': True})
    assert call.provider_details is not None
    assert call.provider_details['route'] == {
        'choice': 'refund',
        'probabilities': {'Reply': 0.0, 'refund': 0.8, 'lookup': 0.0},
        'offered': ['Reply', 'refund', 'lookup'],
    }
    # The tool returned this turn: it is not offered again, and the state says what was done since the prompt.
    assert second.questions['route'] == ChoiceQuestion(
        criteria={'Reply': 'Answer the customer directly.', 'lookup': 'Look the order up.'},
        instructions='Which of these does this call for?',
    )
    assert second.state == {
        'text': 'I want my money back.',
        'done': [
            {'tool_call': {'name': 'refund', 'args': {'full': True}}},
            {'tool_return': {'name': 'refund', 'content': 'refunded'}},
        ],
    }


async def test_a_picked_route_it_cannot_fill_is_handed_off() -> None:
    model = ScriptedDecisions({'route': 'lookup'})
    with pytest.raises(UnfillableRoute) as caught:
        await _agent(model).run('Where is order 42?')
    error = caught.value
    assert (error.route, error.probability, error.model_name) == ('lookup', 0.8, 'scripted')
    assert str(error).startswith("scripted picked 'lookup' (probability 0.80) but cannot fill it.")
    assert len(model.requests) == 1
    copy = pickle.loads(pickle.dumps(error))
    assert (type(copy), copy.route, copy.probability, str(copy)) == (UnfillableRoute, 'lookup', 0.8, str(error))
    with pytest.warns(DeprecationWarning, match='`tool_name` is deprecated, use `route` instead'):
        assert error.tool_name == 'lookup'


async def test_a_pick_below_the_route_threshold_is_handed_off() -> None:
    model = ScriptedDecisions({'route': 'refund'}, settings={'decision_route_threshold': 0.9})
    with pytest.raises(UnsureRoute) as caught:
        await _agent(model).run('Hm.')
    error = caught.value
    assert (error.route, error.probability, error.threshold) == ('refund', 0.8, 0.9)
    assert error.probabilities == {'Reply': 0.0, 'refund': 0.8, 'lookup': 0.0}
    assert 'below `decision_route_threshold` (0.90)' in str(error)
    copy = pickle.loads(pickle.dumps(error))
    assert (copy.probabilities, copy.threshold, str(copy)) == (error.probabilities, 0.9, str(error))


async def test_a_fallback_model_takes_the_steps_handed_off() -> None:
    def language_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {'polite': False})])

    decisions = ScriptedDecisions({'route': 'lookup'})
    result = await _agent(FallbackModel(decisions, FunctionModel(language_model))).run('Where is order 42?')
    assert result.output == Reply(polite=False)
    assert len(decisions.requests) == 1


async def test_past_the_size_cutoff_the_picked_route_is_filled_in_a_second_request() -> None:
    model = ScriptedDecisions({'route': ['refund', 'Reply'], 'full': 0.2})
    result = await _agent(model).run(_LONG)
    picking, filling = model.requests[:2]
    assert sorted(picking.questions) == ['Reply.polite', 'route']  # the single output type is still asked up front
    assert list(filling.questions) == ['full']
    assert filling.state == picking.state
    call = result.all_messages()[1]
    assert isinstance(call, ModelResponse)
    assert call.provider_details is not None
    assert call.parts[0].args == {'full': False}  # type: ignore[union-attr]
    assert call.provider_details['requests'] == 2
    assert call.usage.input_tokens == 20  # both requests


async def test_a_failure_while_filling_a_picked_route_ends_the_step() -> None:
    def respond(request: DecisionRequest) -> dict[str, DecisionAnswer]:
        if 'route' in request.questions:
            return {key: answer(q, 'refund' if key == 'route' else None) for key, q in request.questions.items()}
        assert list(request.questions) == ['full']
        return {}  # no answer to `full`

    with pytest.raises(
        UnexpectedModelBehavior, match=r"scripted selected 'refund', but failed while filling its fields"
    ):
        await _agent(ScriptedDecisions(respond=respond)).run(_LONG)


class Escalate(BaseModel):
    """Hand the ticket to a human."""

    angry: bool = Field(description='Is the customer angry?')


_CHOICES: Any = [Reply, Escalate, None]
_URGENCY: Any = Literal['low', 'high']


async def test_a_union_of_output_types_asks_which_one() -> None:
    model = ScriptedDecisions({'route': 'Escalate', 'Escalate.angry': 0.95})
    result = await Agent[None, Any](model, output_type=_CHOICES).run('This is unacceptable!')
    assert result.output == Escalate(angry=True)
    (request,) = model.requests
    assert request.questions['route'] == ChoiceQuestion(
        criteria={
            'Reply': 'Answer the customer directly.',
            'Escalate': 'Hand the ticket to a human.',
            'NoneType': 'None of these.',
        },
        instructions='Which of these does this call for?',
    )
    model = ScriptedDecisions({'route': 'NoneType'})
    declined = await Agent[None, Any](model, output_type=_CHOICES).run('ok')
    assert declined.output is None
    assert declined.all_messages()[-2].parts[0].args == {'response': None}  # type: ignore[union-attr]


async def test_an_output_type_that_says_nothing_about_itself_cannot_be_weighed() -> None:
    class Bare(BaseModel):
        flag: bool = Field(description='Flag it?')

    class Other(BaseModel):
        """Something else."""

        flag: bool = Field(description='Flag it?')

    with pytest.raises(UserError, match=r"and 'Bare' says nothing about itself. Give the output type a docstring"):
        await Agent(ScriptedDecisions(), output_type=[Bare, Other]).run('x')


async def test_the_last_tool_left_is_called_without_asking() -> None:
    def tool(name: str, **properties: Any) -> ToolDefinition:
        schema = {'type': 'object', 'properties': properties}
        return ToolDefinition(name=name, parameters_json_schema=schema, description=f'{name} it')

    model = ScriptedDecisions({'keep': 0.4})
    params = ModelRequestParameters(
        function_tools=[tool('archive'), tool('notify', keep={'type': 'boolean', 'description': 'Keep a copy?'})],
        output_mode='tool',
        allow_text_output=False,
    )
    done: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart('Tidy up.')]),
        ModelResponse(parts=[ToolCallPart('archive', {}, 'c1')]),
        ModelRequest(parts=[ToolReturnPart('archive', 'archived', 'c1')]),
    ]
    response = await model.request(done, None, params)
    assert isinstance(part := response.parts[0], ToolCallPart)
    assert (part.tool_name, part.args) == ('notify', {'keep': False})
    assert response.provider_details is not None
    assert response.provider_details['route'] == {
        'choice': 'notify',
        'probabilities': {'notify': 1.0},
        'offered': ['notify'],
    }
    assert list(model.requests[0].questions) == ['keep']
    params = ModelRequestParameters(function_tools=[tool('archive'), tool('close')], allow_text_output=False)
    response = await model.request(done, None, params)
    assert isinstance(part := response.parts[0], ToolCallPart)
    assert part.tool_name == 'close'
    assert len(model.requests) == 1  # nothing to fill: no request


async def test_the_history_before_the_prompt_goes_beside_it() -> None:
    model = ScriptedDecisions({'response': 0.1})
    history: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart('Hello')]),
        ModelResponse(parts=[TextPart('Hi, how can I help?')]),
    ]
    agent = Agent(model, output_type=bool, instructions='Does the user want to cancel?', system_prompt='Be brief.')
    result = await agent.run('Just browsing.', message_history=history)
    assert result.output is False
    assert model.requests[0].state == {
        'history': [{'user': 'Hello'}, {'assistant': 'Hi, how can I help?'}],
        'text': 'Just browsing.',
    }


async def test_a_streamed_run_gets_the_whole_answer_as_one_tool_call() -> None:
    model = ScriptedDecisions({'response': 'high'})
    agent = Agent[None, Any](model, output_type=_URGENCY, instructions='How urgent?')
    async with agent.run_stream('Server down!') as stream:
        assert await stream.get_output() == 'high'
    events = []
    async with model.request_stream(
        [ModelRequest(parts=[UserPromptPart('Server down!')])],
        None,
        ModelRequestParameters(
            output_tools=[
                ToolDefinition(
                    name='final_result',
                    kind='output',
                    parameters_json_schema={'type': 'object', 'properties': {'level': {'enum': ['low', 'high']}}},
                    description='Rate it.',
                )
            ],
            output_mode='tool',
            allow_text_output=False,
        ),
    ) as streamed:
        events = [event async for event in streamed]
        whole = streamed.get()
    assert [type(event).__name__ for event in events] == ['PartStartEvent', 'FinalResultEvent', 'PartEndEvent']
    assert isinstance(part := whole.parts[0], ToolCallPart)
    assert part.args == {'level': 'low'}
    assert streamed.provider_details == whole.provider_details


async def test_each_request_is_a_decide_span_inside_the_model_request(capfire: CaptureLogfire) -> None:
    model = ScriptedDecisions({'route': ['refund', 'Reply'], 'full': 0.2})
    await _agent(model).run(_LONG, model_settings=DecisionModelSettings(decision_route_threshold=0.5))
    spans = sorted(capfire.exporter.exported_spans_as_dict(), key=lambda s: s['start_time'])
    decides = [s['attributes'] for s in spans if s['name'] == 'decide scripted']
    assert len(decides) == 3  # pick, fill, then the pick of the second step
    picking, filling = decides[:2]
    assert json.loads(picking['pydantic_ai.decision.questions']) == {
        'Reply.polite': {'type': 'noul'},
        'route': {'type': 'choice'},
    }
    assert json.loads(picking['pydantic_ai.decision.thresholds']) == {'boolean': 0.5, 'route': 0.5}
    assert json.loads(filling['pydantic_ai.decision.questions']) == {'full': {'type': 'noul'}}
    assert (filling['gen_ai.operation.name'], filling['gen_ai.response.model']) == ('decide', 'scripted-1')
    assert filling['pydantic_ai.decision.usage.input_tokens'] == 10
    assert _LONG not in json.dumps(decides)  # the state is content: not recorded
