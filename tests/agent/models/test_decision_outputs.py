"""`DecisionModel` with one output type: which fields become which questions, and how the answers come back."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field, WithJsonSchema

from edgewise.agent import Agent
from edgewise.agent.exceptions import UserError
from edgewise.agent.messages import ModelResponse
from edgewise.agent.models.decision import (
    ChoiceQuestion,
    DecisionModelSettings,
    NoulCriteria,
    NoulQuestion,
    ScoreQuestion,
)
from edgewise.agent.profiles.decision import DecisionModelProfile

from ._decision_backend import ScriptedDecisions

pytestmark = pytest.mark.anyio


def _levels(*meanings: str) -> WithJsonSchema:
    """A rubric: whole numbers from 0, each level described in the schema."""
    return WithJsonSchema({'anyOf': [{'const': n, 'description': m} for n, m in enumerate(meanings)]})


class Priority(Enum):
    """How soon the team should look."""

    low = 'low'
    high = 'high'


class Ticket(BaseModel):
    """Triage of a support ticket."""

    urgent: bool = Field(description='Does the customer need an answer today?')
    priority: Priority = Field(description='Which priority?')
    area: Literal['billing', 'login'] | None = Field(description='Which area is it about?')
    spam: float = Field(ge=0, le=100, description='How likely is this spam, in percent?')
    severity: Annotated[Literal[0, 1, 2], _levels('cosmetic', 'degraded', 'down')] = Field(description='How bad is it?')
    topics: list[Literal['refund', 'bug', 'praise']] = Field(description='Which topics does it raise?')


def _response(result: Any) -> ModelResponse:
    response = result.all_messages()[-2]
    assert isinstance(response, ModelResponse)
    return response


async def test_a_bool_output_is_one_yes_no_asked_by_the_instructions() -> None:
    model = ScriptedDecisions({'response': 0.8})
    result = await Agent(model, output_type=bool, instructions='Is the customer angry?').run('This is the third time!')
    assert result.output is True
    (request,) = model.requests
    assert request.state == 'This is the third time!'
    assert request.questions == {'response': NoulQuestion(instructions='Is the customer angry?')}
    response = _response(result)
    assert response.provider_details == {'confidence': {'response': 0.6}, 'probabilities': {}, 'scores': {}}
    assert (response.provider_name, response.provider_url, response.model_name) == (
        'scripted-decisions',
        'http://decisions.invalid',
        'scripted-1',
    )
    assert response.finish_reason == 'tool_call'


async def test_the_boolean_threshold_sets_the_bar_and_the_confidence() -> None:
    model = ScriptedDecisions({'response': 0.8})
    agent = Agent(model, output_type=bool, instructions='Angry?')
    result = await agent.run('x', model_settings=DecisionModelSettings(decision_boolean_threshold=0.9))
    assert result.output is False
    assert _response(result).provider_details['confidence'] == {'response': pytest.approx(0.111111)}  # type: ignore[index]
    with pytest.raises(UserError, match=r'`decision_boolean_threshold` must be between 0 and 1; got 1\.5'):
        await agent.run('x', model_settings=DecisionModelSettings(decision_boolean_threshold=1.5))
    assert len(model.requests) == 1  # the bad setting was refused before anything was sent


async def test_every_decidable_field_of_a_model_becomes_its_question() -> None:
    model = ScriptedDecisions(
        {'area': 'none', 'priority': 'high', 'spam': 0.25, 'severity': 1.6, 'topics.refund': 0.7, 'topics.bug': 0.2}
    )
    result = await Agent(model, output_type=Ticket).run('I was charged twice, please refund.')
    assert result.output == Ticket(
        urgent=True, priority=Priority.high, area=None, spam=25.0, severity=2, topics=['refund', 'praise']
    )
    goal = 'Triage of a support ticket.'
    assert model.requests[0].questions == {
        'urgent': NoulQuestion(
            instructions={'field': 'urgent', 'question': 'Does the customer need an answer today?', 'goal': goal}
        ),
        'priority': ChoiceQuestion(
            criteria={'low': None, 'high': None},
            instructions={
                'field': 'priority',
                'context': ['Priority: How soon the team should look.'],
                'question': 'Which priority?',
                'goal': goal,
            },
        ),
        'area': ChoiceQuestion(
            criteria={'billing': None, 'login': None, 'none': 'None of these.'},
            instructions={'field': 'area', 'question': 'Which area is it about?', 'goal': goal},
        ),
        'spam': NoulQuestion(
            instructions={'field': 'spam', 'question': 'How likely is this spam, in percent?', 'goal': goal}
        ),
        'severity': ScoreQuestion(
            criteria=['cosmetic', 'degraded', 'down'],
            instructions={'field': 'severity', 'question': 'How bad is it?', 'goal': goal},
        ),
        **{
            f'topics.{topic}': NoulQuestion(
                instructions={
                    'field': 'topics',
                    'question': 'Which topics does it raise?',
                    'goal': goal,
                    'option': topic,
                }
            )
            for topic in ('refund', 'bug', 'praise')
        },
    }
    details = _response(result).provider_details
    assert details == {
        'confidence': {'urgent': 0.8, 'priority': 0.8, 'area': 0.8, 'severity': 0.7, 'topics': 0.4},
        'probabilities': {
            'priority': {'low': 0.0, 'high': 0.8},
            'area': {'billing': 0.0, 'login': 0.0, 'none': 0.8},
            'severity': {'0': 0.0, '1': pytest.approx(0.4), '2': pytest.approx(0.6)},
            'topics': {'refund': 0.7, 'bug': 0.2, 'praise': 0.9},
        },
        'scores': {'severity': 1.6},
    }


class Trip(BaseModel):
    """A trip request."""

    class Place(BaseModel):
        """A place on the trip."""

        coastal: bool = Field(description='Is it by the sea?')

    origin: Place = Field(description='Where the trip starts')
    destination: Place = Field(description='Where the trip ends')
    extras: dict[Literal['meals', 'seats'], bool] = Field(description='Which extras are asked for?')
    kind: Literal['work', 'leisure'] | None = Field(default='leisure', description='Why travel?')


async def test_nested_models_carry_their_context_and_a_mapping_keeps_every_key() -> None:
    model = ScriptedDecisions({'origin.coastal': 0.1, 'extras.seats': 0.3, 'kind': 'none'})
    result = await Agent(model, output_type=Trip).run('From Lyon to Nice, with meals.')
    assert result.output == Trip(
        origin=Trip.Place(coastal=False),
        destination=Trip.Place(coastal=True),
        extras={'meals': True, 'seats': False},
        kind='leisure',  # `None of these` leaves the field to its default
    )
    questions = model.requests[0].questions
    assert questions['destination.coastal'] == NoulQuestion(
        instructions={
            'field': 'destination.coastal',
            'context': ['destination: Where the trip ends', 'Place: A place on the trip.'],
            'question': 'Is it by the sea?',
            'goal': 'A trip request.',
        }
    )
    assert sorted(questions) == ['destination.coastal', 'extras.meals', 'extras.seats', 'kind', 'origin.coastal']


class Verdict(Enum):
    """Whether the claim holds."""

    holds = True
    fails = False


async def test_described_booleans_are_a_yes_no_with_criteria() -> None:
    schema_extra = {'anyOf': [{'const': True, 'description': 'it holds'}, {'const': False, 'description': 'it fails'}]}

    class Claim(BaseModel):
        ok: Annotated[bool, Field(description='Does the claim hold?', json_schema_extra=schema_extra)]

    model = ScriptedDecisions({'ok': 0.3})
    result = await Agent(model, output_type=Claim).run('The sky is green.')
    assert result.output == Claim(ok=False)
    assert model.requests[0].questions == {
        'ok': NoulQuestion(
            instructions={'field': 'ok', 'question': 'Does the claim hold?'},
            criteria=NoulCriteria(true='it holds', false='it fails'),
        )
    }


async def test_a_backend_that_requires_instructions_gets_a_generic_question() -> None:
    class Pick(BaseModel):
        colour: Literal['red', 'blue']

    model = ScriptedDecisions(profile=DecisionModelProfile(decision_requires_instructions=True))
    await Agent(model, output_type=Pick).run('A red car.')
    assert model.requests[0].questions == {
        'colour': ChoiceQuestion(criteria={'red': None, 'blue': None}, instructions='colour')  # a lone part goes bare
    }
    model = ScriptedDecisions(profile=DecisionModelProfile(decision_requires_instructions=True))
    await Agent(model, output_type=Literal['red', 'blue']).run('A red car.')  # type: ignore[arg-type]
    assert model.requests[0].questions['response'] == ChoiceQuestion(
        criteria={'red': None, 'blue': None}, instructions='Which of these applies?'
    )


async def test_whole_numbers_past_the_rubric_limit_are_a_pick_one() -> None:
    class Rated(BaseModel):
        rating: Annotated[Literal[0, 1, 2], _levels('bad', 'fine', 'good')] = Field(description='How good?')

    model = ScriptedDecisions({'rating': '2'}, profile=DecisionModelProfile(decision_max_score_levels=2))
    result = await Agent(model, output_type=Rated).run('Great.')
    assert result.output == Rated(rating=2)
    assert isinstance(model.requests[0].questions['rating'], ChoiceQuestion)


class Free(BaseModel):
    """A summary."""

    summary: str = Field(description='Summarise it')


@pytest.mark.parametrize(
    ('output_type', 'message'),
    [
        (Free, r"Output field 'summary' is not supported by this model\. Use `bool`, a `Literal`"),
        (bool, r"Output field 'response' asks the model nothing: give the field a description"),
        (list[Literal['a']], r"Output field 'response' is not supported by this model: a list must be of two"),
    ],
)
async def test_a_field_the_model_cannot_express_is_a_clear_error_before_sending(output_type: Any, message: str) -> None:
    model = ScriptedDecisions()
    with pytest.raises(UserError, match=message):
        await Agent(model, output_type=output_type).run('x')
    assert model.requests == []


async def test_a_pick_one_over_the_option_limit_is_refused() -> None:
    model = ScriptedDecisions(profile=DecisionModelProfile(decision_max_choice_options=2))
    with pytest.raises(UserError, match=r'it picks from at most 2 options, and this one has 3'):
        await Agent(model, output_type=Literal['a', 'b', 'c'], instructions='Which?').run('x')  # type: ignore[arg-type]
