"""`DecisionModel` at its edges: the judged state of unusual histories, fields and routes it refuses, request caps."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any, ClassVar, Literal

import pytest
from pydantic import BaseModel, Field

from edgewise.agent import Agent
from edgewise.agent.exceptions import ModelAPIError, UserError
from edgewise.agent.messages import (
    BinaryContent,
    CompactionPart,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    StructuredContent,
    SystemPromptPart,
    TextContent,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models.decision import ChoiceQuestion
from edgewise.agent.profiles.decision import DecisionModelProfile
from edgewise.agent.tools import ToolDefinition

from ._decision_backend import ScriptedDecisions

pytestmark = pytest.mark.anyio


def _output(properties: dict[str, Any], **schema: Any) -> ModelRequestParameters:
    tool = ToolDefinition(
        name='final_result',
        kind='output',
        description='Judge it.',
        parameters_json_schema={'type': 'object', 'properties': properties, **schema},
    )
    return ModelRequestParameters(output_tools=[tool], output_mode='tool', allow_text_output=False)


_YES_NO = _output({'ok': {'type': 'boolean', 'description': 'Is it fine?'}})


async def _state(messages: list[ModelMessage]) -> Any:
    model = ScriptedDecisions()
    await model.request(messages, None, _YES_NO)
    return model.requests[0].state


async def test_a_structured_prompt_is_judged_as_its_value() -> None:
    prompt = StructuredContent({'screen': 'checkout', 'total': 12})
    assert await _state([ModelRequest(parts=[UserPromptPart([prompt])])]) == {'screen': 'checkout', 'total': 12}
    earlier = ModelRequest(parts=[UserPromptPart([TextContent('hi'), 'there'])])
    assert await _state([earlier, ModelRequest(parts=[UserPromptPart([prompt])])]) == {
        'history': [{'user': 'hi\n\nthere'}],
        'state': {'screen': 'checkout', 'total': 12},
    }


async def test_what_the_assistant_did_and_the_retries_are_history() -> None:
    messages: list[ModelMessage] = [
        ModelRequest(parts=[SystemPromptPart('Be fair.'), UserPromptPart('Is 2+2=5?')]),
        ModelResponse(
            parts=[
                ThinkingPart('hmm'),
                ThinkingPart(''),
                CompactionPart('earlier turns'),
                ToolCallPart('calc', {'x': '2+2'}, 'c1'),
            ]
        ),
        ModelRequest(parts=[ToolReturnPart('calc', 4, 'c1'), RetryPromptPart('Answer again')]),
    ]
    state = await _state(messages)
    assert state == {
        'history': [{'system': 'Be fair.'}],
        'text': 'Is 2+2=5?',
        'done': [
            {'thinking': 'hmm'},
            {'summary': 'earlier turns'},
            {'tool_call': {'name': 'calc', 'args': {'x': '2+2'}}},
            {'tool_return': {'name': 'calc', 'content': '4'}},
            {'retry': RetryPromptPart('Answer again').model_response()},
        ],
    }


async def test_a_history_ending_in_an_answer_has_no_text() -> None:
    messages: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart('Refund please')]),
        ModelResponse(parts=[TextPart('Done.')]),
    ]
    assert await _state(messages) == {'history': [{'user': 'Refund please'}, {'assistant': 'Done.'}]}
    with pytest.raises(UserError, match='A request without user text is not supported by this model'):
        await _state([ModelRequest(parts=[UserPromptPart('')])])


async def test_files_are_refused_as_a_decision_model_judges_text() -> None:
    image = BinaryContent(b'\x89PNG', media_type='image/png')
    with pytest.raises(UserError, match='Files are not supported by this model: it judges text'):
        await _state([ModelRequest(parts=[UserPromptPart(['look', image])])])


@pytest.mark.parametrize(
    ('properties', 'message'),
    [
        ({'a.b': {'type': 'boolean'}}, r"Output field 'a\.b' is not supported by this model: a dot in a field name"),
        (
            {'level': {'anyOf': [{'anyOf': [{'const': 0, 'description': 'x'}, {'const': 1, 'description': 'y'}]},
                                 {'type': 'null'}]}},
            r"Output field 'level' is a rubric, and a rubric cannot be optional",
        ),
        (
            {'tags': {'type': 'object', 'additionalProperties': {'type': 'boolean'}, 'propertyNames': {'enum': ['a']}}},
            r"Output field 'tags' is not supported by this model: a mapping must be keyed by two or more options",
        ),
        ({'n': {'anyOf': [{'type': 'integer'}, {'type': 'null'}]}}, r'only a pick-one of strings or whole numbers'),
        ({'tags': {'type': 'array', 'items': {'enum': ['a', 'b']}, 'maxItems': 1}}, r"Output field 'tags' is not"),
    ],
)  # fmt: skip
async def test_fields_it_cannot_ask_are_refused(properties: dict[str, Any], message: str) -> None:
    with pytest.raises(UserError, match=message):
        await ScriptedDecisions().request([ModelRequest(parts=[UserPromptPart('x')])], None, _output(properties))


async def test_a_model_that_contains_itself_is_refused() -> None:
    class Node(BaseModel):
        leaf: bool = Field(description='Is it a leaf?')
        child: Node

    with pytest.raises(UserError, match=r"Output field 'child\.child' is not supported by this model: a model that"):
        await Agent(ScriptedDecisions(), output_type=Node).run('x')


async def test_whole_numbers_and_their_digits_are_distinct_options() -> None:
    model = ScriptedDecisions({'code': '1 (number)'})
    properties = {'code': {'enum': ['1', 1, 2], 'description': 'Which code?'}}
    response = await model.request([ModelRequest(parts=[UserPromptPart('x')])], None, _output(properties))
    assert response.parts[0].args == {'code': 1}  # type: ignore[union-attr]
    assert model.requests[0].questions['code'] == ChoiceQuestion(
        criteria={'1': None, '1 (number)': None, '2': None},
        instructions={'field': 'code', 'question': 'Which code?', 'goal': 'Judge it.'},
    )


async def test_a_described_boolean_pair_with_nothing_said_is_a_plain_yes_no() -> None:
    model = ScriptedDecisions({'ok': 0.2})
    properties = {'ok': {'enum': [True, False], 'type': 'boolean', 'description': 'Fine?'}}
    response = await model.request([ModelRequest(parts=[UserPromptPart('x')])], None, _output(properties))
    assert response.parts[0].args == {'ok': False}  # type: ignore[union-attr]


class Outer(BaseModel):
    """An outer model."""

    class Inner(BaseModel):
        pick: Literal['a', 'b'] | None = Field(default='a', description='Which?')

    inner: Inner = Inner()
    flag: bool = Field(description='Flag?')


async def test_a_defaulted_nested_model_left_unanswered_is_left_out() -> None:
    model = ScriptedDecisions({'inner.pick': 'none'})
    result = await Agent(model, output_type=Outer).run('x')
    assert result.output == Outer(inner=Outer.Inner(pick='a'), flag=True)
    assert result.all_messages()[-2].parts[0].args == {'flag': True}  # type: ignore[union-attr]


class TooMany(ScriptedDecisions):
    max_questions: ClassVar[int | None] = 1


async def test_a_request_over_the_question_cap_is_a_model_api_error() -> None:
    properties = {'a': {'type': 'boolean', 'description': 'A?'}, 'b': {'type': 'boolean', 'description': 'B?'}}
    with pytest.raises(ModelAPIError, match='scripted accepts at most 1 questions; got 2'):
        await TooMany().request([ModelRequest(parts=[UserPromptPart('x')])], None, _output(properties))


def _tools(*names: str) -> list[ToolDefinition]:
    return [ToolDefinition(name=name, description=f'{name} it') for name in names]


async def test_routes_it_cannot_offer_are_refused() -> None:
    prompt: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart('x')])]
    model = ScriptedDecisions(profile=DecisionModelProfile(decision_max_choice_options=2))
    params = ModelRequestParameters(function_tools=_tools('a', 'b', 'c'), allow_text_output=False)
    with pytest.raises(UserError, match='This model picks from at most 2 options, and it is being offered 3 routes'):
        await model.request(prompt, None, params)
    with pytest.raises(UserError, match='An `output_type` with no fields is not supported by this model'):
        await model.request(prompt, None, ModelRequestParameters(function_tools=_tools('a'), allow_text_output=False))
    lookup = ToolDefinition(
        name='t', parameters_json_schema={'type': 'object', 'properties': {'q': {'type': 'string'}}}
    )
    free = _output({'text': {'type': 'string'}}).output_tools[0]
    params = ModelRequestParameters(output_tools=[free], function_tools=[lookup])
    with pytest.raises(UserError, match=r"Output field 'text' is not supported"):  # alone, its own field is the error
        await model.request(prompt, None, params)
    union = [dataclasses.replace(free, name=f'final_result_{name}') for name in ('A', 'B')]
    with pytest.raises(UserError, match='None of the output types can be filled by this model'):
        await model.request(prompt, None, ModelRequestParameters(output_tools=union, function_tools=[lookup]))


async def test_a_route_of_an_enum_says_what_it_is_for_through_its_docstring() -> None:
    from enum import Enum

    class Mood(Enum):
        """The customer's mood."""

        calm = 'calm'
        angry = 'angry'

    model = ScriptedDecisions({'route': 'output', 'output.response': 'angry'})
    agent = Agent[None, Any](model, output_type=Mood)

    @agent.tool_plain
    def wait(patient: Annotated[bool, Field(description='Be patient?')]) -> str:
        """Wait and see."""
        return 'waited'

    result = await agent.run('!!!')
    assert result.output is Mood.angry
    # Edgewise's tool-mode request names no output object, so a wrapped type goes by `output` (2.68: `Mood`).
    assert model.requests[0].questions['route'] == ChoiceQuestion(
        criteria={'output': "The customer's mood.", 'wait': 'Wait and see.'},
        instructions='Which of these does this call for?',
    )


async def test_a_text_output_is_refused_as_a_decision_model_writes_no_text() -> None:
    model = ScriptedDecisions()
    with pytest.raises(UserError, match='Text output is not supported by this model'):
        await Agent(model).run('hi')
    assert model.requests == []
