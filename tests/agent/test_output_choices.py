"""pydantic-ai 2.68's output vocabulary: `Choices` and `Choice` (options known at run time, with what each stands
for or an action to call), `BoolCriteria` (what a yes and a no mean), enums whose members are described by their
docstrings (`UseEnumMemberDocstrings`), and `PendingModelResponse` (a run ending while the provider still works)."""

from __future__ import annotations

import functools
from collections.abc import Awaitable
from enum import Enum
from typing import Annotated, Any, Literal, cast

import pydantic
import pytest
from inline_snapshot import snapshot
from pydantic import BaseModel, Field

from edgewise.agent import (
    Agent,
    BoolCriteria,
    Choice,
    Choices,
    DeferredToolRequests,
    ModelRetry,
    NativeOutput,
    PendingModelResponse,
    PromptedOutput,
    UnexpectedModelBehavior,
    UseEnumMemberDocstrings,
    UserError,
)
from edgewise.agent.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, UserPromptPart
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.test import TestModel

pytestmark = pytest.mark.anyio


async def _output_tool_schema(agent: Agent[Any, Any]) -> dict[str, Any]:
    """The parameters schema of the agent's only output tool, as the model is given it."""
    seen: list[dict[str, Any]] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.extend(tool.parameters_json_schema for tool in info.output_tools)
        return ModelResponse([TextPart('no call')])

    with pytest.raises(UnexpectedModelBehavior):
        await agent.run('x', model=FunctionModel(answer), retries={'output': 0})
    return seen[0]


def _answers(*args: Any) -> FunctionModel:
    """A model answering each request with the next output tool call (`{'response': arg}`)."""
    left = list(args)

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        tool = info.output_tools[0].name
        return ModelResponse([ToolCallPart(tool, {'response': left.pop(0)})])

    return FunctionModel(answer)


# --- Choices --------------------------------------------------------------------------------------------------------


async def test_choices_from_keys_give_the_key_picked_and_an_enum_schema() -> None:
    Color = Choices(['red', 'green'])
    agent = Agent(TestModel(), output_type=Color)
    result = await agent.run('Pick')
    assert result.output == 'red'
    assert Color.__name__ == 'Choices'
    assert pydantic.TypeAdapter(Color).json_schema() == {'type': 'string', 'enum': ['red', 'green']}


async def test_choices_with_descriptions_show_each_key_described() -> None:
    Intent = Choices(
        {'refund': 'Money back.', 'replace': 'A new unit.'}, name='intent', description='What the customer wants.'
    )
    agent = Agent(_answers('replace'), output_type=Intent)
    assert (await agent.run('Send another one')).output == 'replace'
    assert Intent.__name__ == 'intent'
    assert pydantic.TypeAdapter(Intent).json_schema() == snapshot(
        {
            'type': 'string',
            'anyOf': [
                {'const': 'refund', 'description': 'Money back.'},
                {'const': 'replace', 'description': 'A new unit.'},
            ],
            'description': 'What the customer wants.',
        }
    )


async def test_a_key_outside_the_choices_is_retried() -> None:
    agent = Agent(_answers('blue', 'red'), output_type=Choices(['red', 'green']))
    result = await agent.run('Pick')
    assert result.output == 'red'
    retry = result.all_messages()[2]
    assert isinstance(retry, ModelRequest)
    assert "Input should be 'red' or 'green'" in str(retry.parts[0])


async def test_choice_values_are_what_the_keys_stand_for() -> None:
    cards: dict[str, str | Choice[int]] = {
        'visa': Choice('Starts with a 4.', value=4),
        'amex': Choice('Starts with a 3.', value=3),
        'other': 'x',
    }
    Card = Choices(cards)
    agent = Agent(_answers('amex'), output_type=Card)
    assert (await agent.run('3782 8224')).output == 3
    assert pydantic.TypeAdapter(Card).validate_python('other') == 'other'
    schema = pydantic.TypeAdapter(Card).json_schema()
    assert schema['anyOf'][2] == {'const': 'other', 'description': 'x'}


def test_a_choice_value_works_in_a_model_field_and_as_a_tool_parameter() -> None:
    Size = Choices({'s': Choice(value=1), 'l': Choice(value=3)})

    class Order(BaseModel):
        size: Size  # type: ignore[valid-type]

    assert Order.model_validate({'size': 'l'}).size == 3
    with pytest.raises(pydantic.ValidationError):
        Order.model_validate({'size': 'm'})
    assert Order.model_json_schema()['properties']['size'] == {'type': 'string', 'enum': ['s', 'l'], 'title': 'Size'}


async def test_an_async_action_is_called_once_the_pick_is_final() -> None:
    calls: list[str] = []

    async def approve() -> str:
        calls.append('approve')
        return 'approved'

    actions: dict[str, str | Choice[str]] = {'approve': Choice('Approve it.', value=approve), 'hold': 'Wait.'}
    Action = Choices(actions)
    agent = Agent(_answers('approve'), output_type=Action)
    assert (await agent.run('Decide')).output == 'approved'
    assert calls == ['approve']


async def test_a_plain_action_runs_and_an_awaitable_it_returns_is_awaited() -> None:
    async def later() -> str:
        return 'later'

    def plain() -> str:
        return 'plain'

    def gives_awaitable() -> Awaitable[str]:
        return later()

    actions: dict[str, Choice[Any]] = {
        'a': Choice(value=plain),
        'b': Choice(value=gives_awaitable),
        'c': Choice(value=7),
    }
    agent: Agent[None, Any] = Agent(_answers('a', 'b', 'c'), output_type=Choices(actions))
    assert (await agent.run('1')).output == 'plain'
    assert (await agent.run('2')).output == 'later'
    assert (await agent.run('3')).output == 7


async def test_a_model_retry_from_an_action_asks_the_model_again() -> None:
    tries: list[int] = []

    def flaky() -> str:
        tries.append(1)
        if len(tries) == 1:
            raise ModelRetry('Not now, pick again.')
        return 'done'

    agent = Agent(_answers('go', 'go'), output_type=Choices({'go': Choice(value=flaky)}))
    result = await agent.run('Go')
    assert result.output == 'done'
    assert 'Not now, pick again.' in str(result.all_messages()[2])


async def test_an_action_bound_with_partial_is_accepted() -> None:
    def pick(name: str) -> str:
        return f'picked {name}'

    Action = Choices({'x': Choice(value=functools.partial(pick, 'x'))})
    assert (await Agent(_answers('x'), output_type=Action).run('Go')).output == 'picked x'


async def test_a_streamed_action_is_called_once_for_the_final_output() -> None:
    calls: list[int] = []

    def act() -> str:
        calls.append(1)
        return 'acted'

    actions: dict[str, str | Choice[str]] = {'a': Choice(value=act), 'b': 'B'}
    agent = Agent(TestModel(), output_type=Choices(actions))
    async with agent.run_stream('Go') as stream:
        outputs = [output async for output in stream.stream_output(debounce_by=None)]
    assert outputs[-1] == 'acted'
    assert all(output in ('a', 'acted') for output in outputs)
    assert calls == [1]


async def test_actions_among_several_output_types_and_in_native_output() -> None:
    def act() -> str:
        return 'acted'

    Action = Choices({'a': Choice(value=act)}, name='Action')

    def native(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse([TextPart('{"result": {"kind": "Action", "data": {"response": "a"}}}')])

    agent: Agent[None, Any] = Agent(FunctionModel(native), output_type=NativeOutput([Action, int]))
    assert (await agent.run('Go')).output == 'acted'


def test_a_choice_value_that_needs_arguments_is_refused() -> None:
    def needs(x: int) -> int:
        return x  # pragma: no cover - never called

    with pytest.raises(UserError, match='called with no arguments'):
        Choice(value=needs)
    Choice(value=print)  # a builtin: no arguments needed
    Choice(value=lambda x=1: x)


def test_a_callable_without_a_readable_signature_is_taken_on_trust() -> None:
    class Opaque:
        __signature__ = 'not a signature'

        def __call__(self) -> str:
            return 'ok'  # pragma: no cover - never called

    assert callable(Choice(value=Opaque()).value)


def test_choices_given_a_string_or_nothing_are_refused() -> None:
    with pytest.raises(UserError, match='not a single string'):
        Choices('red')
    with pytest.raises(UserError, match='at least one choice'):
        Choices([])


def test_choices_with_an_action_are_refused_outside_an_output_type() -> None:
    async def act() -> None:
        pass  # pragma: no cover - never called

    Action = Choices({'a': Choice(value=act)})
    with pytest.raises(UserError, match="only be used as an agent's `output_type`"):
        pydantic.TypeAdapter(Action)


# --- BoolCriteria ---------------------------------------------------------------------------------------------------


class Settled(BaseModel):
    refunded: Annotated[bool, BoolCriteria(true='Money went back.', false='No refund.')] = Field(
        description='Was a refund issued?'
    )


async def test_bool_criteria_describe_both_answers() -> None:
    agent = Agent(TestModel(), output_type=Settled)
    assert (await agent.run('We sent it back')).output == Settled(refunded=True)
    assert (await _output_tool_schema(agent))['properties']['refunded'] == snapshot(
        {
            'description': 'Was a refund issued?',
            'type': 'boolean',
            'anyOf': [
                {'const': True, 'description': 'Money went back.'},
                {'const': False, 'description': 'No refund.'},
            ],
        }
    )


def test_bool_criteria_on_anything_but_a_plain_bool_are_refused() -> None:
    criteria = BoolCriteria(true='y', false='n')
    with pytest.raises(UserError, match='only annotate a plain `bool`'):
        pydantic.TypeAdapter(Annotated[Literal[True], criteria]).json_schema()
    with pytest.raises(UserError, match='only annotate a plain `bool`'):
        pydantic.TypeAdapter(Annotated[int, criteria]).json_schema()


# --- UseEnumMemberDocstrings ----------------------------------------------------------------------------------------


class Urgency(UseEnumMemberDocstrings, str, Enum):  # noqa: UP042 - the `str, Enum` form the mixin is written for
    low = 'low'
    """Can wait a week."""
    high = 'high'
    """Today."""
    urgent = 'high'
    """An alias: describes `high` only if `high` has no docstring."""
    normal: str = 'normal'  # type: ignore[misc]
    """Annotated members are described too."""
    plain = 'plain'


class Shade(UseEnumMemberDocstrings, Enum):
    dark = 'dark'
    light = 'light'
    """Pale."""


class Nullable(UseEnumMemberDocstrings, Enum):
    nothing = None
    """No value."""
    something = 1


class Undescribed(str, Enum):  # noqa: UP042
    a = 'a'
    """Ignored without the mixin."""


def test_enum_members_are_described_by_their_docstrings_in_tool_parameters() -> None:
    agent: Agent[None, str] = Agent(TestModel())

    @agent.tool_plain
    def file(urgency: Urgency, shade: Shade, nullable: Nullable, other: Undescribed) -> str:
        """File a ticket."""
        return 'filed'  # pragma: no cover - the schema is all this test reads

    schema = agent._function_toolset.tools['file'].tool_def.parameters_json_schema  # pyright: ignore[reportPrivateUsage]
    defs = schema['$defs']
    assert defs['Urgency']['anyOf'] == snapshot(
        [
            {'const': 'low', 'description': 'Can wait a week.'},
            {'const': 'high', 'description': 'Today.'},
            {'const': 'high', 'description': 'Today.'},  # the alias: pydantic lists a member once per name
            {'const': 'normal', 'description': 'Annotated members are described too.'},
            {'const': 'plain'},
        ]
    )
    assert 'enum' not in defs['Urgency']
    assert defs['Shade']['anyOf'] == [{'const': 'dark'}, {'const': 'light', 'description': 'Pale.'}]
    assert defs['Nullable']['enum'] == [None, 1]  # a null member keeps the plain list
    assert defs['Undescribed']['enum'] == ['a']


async def test_enum_members_are_described_in_output_schemas() -> None:
    agent = Agent(TestModel(), output_type=Urgency)
    assert (await agent.run('How urgent?')).output is Urgency.low
    assert (await _output_tool_schema(agent))['$defs']['Urgency']['anyOf'][0] == {
        'const': 'low',
        'description': 'Can wait a week.',
    }


def test_an_enum_without_readable_source_keeps_its_plain_schema() -> None:
    namespace: dict[str, Any] = {'UseEnumMemberDocstrings': UseEnumMemberDocstrings, 'Enum': Enum}
    exec('class Made(UseEnumMemberDocstrings, Enum):\n    a = 1\n    """One."""\n', namespace)
    from edgewise.agent._functions.schema import GenerateOutputJsonSchema

    schema = pydantic.TypeAdapter(namespace['Made']).json_schema(schema_generator=GenerateOutputJsonSchema)
    assert schema['enum'] == [1]


def test_strings_after_other_statements_describe_no_member() -> None:
    from edgewise.agent._functions.docstrings import enum_member_docstrings

    class Odd(UseEnumMemberDocstrings, Enum):
        """The class docstring."""

        _ignore_ = 'skipped'
        """After a name that is no member."""
        a = 1

        def method(self) -> None:
            """Not a member."""

        """After a method."""
        b = 2

    assert enum_member_docstrings(Odd) == {}


# --- PendingModelResponse -------------------------------------------------------------------------------------------


def _suspended(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse([TextPart('{"partial": ')], state='suspended', provider_response_id='batch_1')


async def test_a_suspended_response_ends_the_run_as_pending() -> None:
    agent: Agent[None, Any] = Agent(FunctionModel(_suspended), output_type=[int, PendingModelResponse])
    result = await agent.run('Work on it')
    assert isinstance(result.output, PendingModelResponse)
    assert result.output.response.state == 'suspended'
    assert result.output.response.provider_response_id == 'batch_1'
    assert result.all_messages()[-1] is result.output.response


async def test_a_complete_response_gives_the_output_as_usual() -> None:
    agent: Agent[None, Any] = Agent(TestModel(), output_type=[int, PendingModelResponse])
    assert (await agent.run('Now')).output == 0
    agent2: Agent[None, Any] = Agent(
        TestModel(), output_type=cast(Any, [NativeOutput(int), PendingModelResponse, DeferredToolRequests])
    )
    assert (await agent2.run('Now')).output == 0


async def test_a_suspended_response_without_pending_output_is_continued_until_whole() -> None:
    # Without `PendingModelResponse` among the output types, the run asks the model to go on with the turn (as
    # pydantic-ai 2.33 continues a suspended turn) instead of ending with it.
    calls: list[int] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        calls.append(len(messages))
        if len(calls) == 1:
            return ModelResponse([TextPart('Par')], state='suspended', provider_response_id='job_1')
        return ModelResponse([TextPart('is')], provider_response_id='job_2')

    result = await Agent(FunctionModel(model)).run('Work on it')
    assert result.output == 'Paris'
    assert calls == [1, 2]  # the second request holds the suspended turn so far


async def test_a_streamed_handling_of_a_suspended_response_ends_the_run() -> None:
    agent: Agent[None, Any] = Agent(FunctionModel(_suspended), output_type=[str, PendingModelResponse])
    async with agent.iter('Work on it') as run:
        node = run.next_node
        while not Agent.is_end_node(node):
            if Agent.is_call_tools_node(node):
                async with node.stream(run.ctx) as events:
                    assert [event async for event in events] == []
            node = await run.next(node)
    assert run.result is not None
    assert isinstance(run.result.output, PendingModelResponse)


async def test_a_streamed_run_validates_a_suspended_response_as_pending() -> None:
    agent: Agent[None, Any] = Agent(TestModel(), output_type=[str, PendingModelResponse])
    async with agent.run_stream('Now') as stream:
        suspended = ModelResponse([TextPart('so far')], state='suspended')
        pending = await stream.validate_response_output(suspended)
        assert pending == PendingModelResponse(response=suspended)
        assert await stream.validate_response_output(suspended, allow_partial=True) == 'so far'
        await stream.get_output()


def test_pending_model_response_alone_or_inside_a_marker_is_refused() -> None:
    with pytest.raises(UserError, match='other than `PendingModelResponse`'):
        Agent(TestModel(), output_type=PendingModelResponse)
    with pytest.raises(UserError, match=r'`NativeOutput` cannot contain `PendingModelResponse`'):
        Agent(TestModel(), output_type=NativeOutput(list[Any]([int, PendingModelResponse])))
    with pytest.raises(UserError, match=r'`PromptedOutput` cannot contain `PendingModelResponse`'):
        Agent(TestModel(), output_type=PromptedOutput(list[Any]([int, PendingModelResponse])))


async def test_pending_output_carries_over_to_the_mode_a_profile_picks() -> None:
    from edgewise.agent.models.test import TEST_PROFILE

    native = FunctionModel(_suspended, profile={**TEST_PROFILE, 'default_structured_output_mode': 'native'})
    agent: Agent[None, Any] = Agent(native, output_type=[int, PendingModelResponse])
    assert isinstance((await agent.run('Go')).output, PendingModelResponse)


def test_a_suspended_response_round_trips_through_json() -> None:
    from edgewise.agent.messages import ModelMessagesTypeAdapter

    history: list[ModelMessage] = [ModelRequest([UserPromptPart('Go')]), ModelResponse([], state='suspended')]
    loaded = ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json(history))
    assert loaded[1] == history[1]
