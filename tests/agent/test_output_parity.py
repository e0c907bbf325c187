"""Output as pydantic-ai 1.107 has it: `None` among the output types, responses with no output in them (empty,
reasoning only, cut by the token limit), output tools of one name, `PromptedOutput(template=False)`, and
`Agent.output_json_schema()`."""

from __future__ import annotations

from typing import Any

import pydantic
import pytest
from inline_snapshot import snapshot

from edgewise.agent import (
    Agent,
    ModelRetry,
    NativeOutput,
    PromptedOutput,
    RunContext,
    StructuredDict,
    TextOutput,
    ToolOutput,
    UnexpectedModelBehavior,
    UserError,
)
from edgewise.agent.messages import (
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    OutputToolCallEvent,
    OutputToolResultEvent,
    RetryPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallEvent,
    ToolCallPart,
    ToolResultEvent,
    ToolReturnPart,
)
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.test import TestModel

pytestmark = pytest.mark.anyio


# Unions are not among the types `Agent(output_type=...)` is typed to take: keep them `Any`.
STR_OR_NONE: Any = str | None
INT_OR_NONE: Any = int | None
LISTS: Any = list[str] | list[int]


class Bar(pydantic.BaseModel):
    answer: str


class Foo(pydantic.BaseModel):
    a: list[Bar]
    b: int


def scripted(*responses: ModelResponse) -> tuple[FunctionModel, list[list[ModelMessage]]]:
    """A model answering with these responses in order, and the message lists it was sent."""
    remaining = list(responses)
    sent: list[list[ModelMessage]] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        sent.append(list(messages))
        return remaining.pop(0)

    return FunctionModel(answer), sent


async def test_none_is_the_output_of_an_empty_response_when_allowed() -> None:
    model, _ = scripted(ModelResponse([]))
    result = await Agent(model, output_type=STR_OR_NONE).run('go')
    assert result.output is None

    seen: list[Any] = []
    model, _ = scripted(ModelResponse([]))
    agent = Agent(model, output_type=STR_OR_NONE)

    @agent.output_validator
    def check(ctx: RunContext[None], value: str | None) -> str | None:
        seen.append(value)
        return value

    assert (await agent.run('go')).output is None
    assert seen == [None]


async def test_none_beside_structured_outputs_is_an_output_tool_too() -> None:
    agent = Agent(TestModel(), output_type=INT_OR_NONE)
    tools: list[str] = []

    def record(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        tools.extend(t.name for t in info.output_tools)
        return ModelResponse([ToolCallPart(info.output_tools[1].name, {'response': None})])

    result = await agent.run('go', model=FunctionModel(record))
    assert tools == ['final_result_int', 'final_result_NoneType']
    assert result.output is None
    model, _ = scripted(ModelResponse([]))
    assert (await agent.run('go', model=model)).output is None


async def test_a_validator_rejecting_none_sends_a_retry_prompt() -> None:
    model, sent = scripted(ModelResponse([]), ModelResponse([TextPart('now text')]))
    agent = Agent(model, output_type=STR_OR_NONE)

    @agent.output_validator
    def refuse_none(value: str | None) -> str | None:
        if value is None:
            from edgewise.agent import ModelRetry

            raise ModelRetry('Say something.')
        return value

    assert (await agent.run('go')).output == 'now text'
    last = sent[-1][-1]
    assert isinstance(last, ModelRequest)
    assert isinstance(last.parts[0], RetryPromptPart)
    assert last.parts[0].content == 'Say something.'


async def test_an_empty_response_cut_by_the_token_limit_is_an_error_naming_the_limit() -> None:
    model, _ = scripted(ModelResponse([ThinkingPart('hmm')], finish_reason='length'))
    with pytest.raises(UnexpectedModelBehavior) as info:
        await Agent(model).run('go', model_settings={'max_tokens': 20})
    assert str(info.value) == snapshot(
        'Model token limit (20) exceeded before any response was generated. Increase the `max_tokens` model '
        'setting, or simplify the prompt to result in a shorter response that will fit within the limit.'
    )
    model, _ = scripted(ModelResponse([], finish_reason='length'))
    with pytest.raises(UnexpectedModelBehavior, match=r'Model token limit \(provider default\) exceeded'):
        await Agent(model, output_type=STR_OR_NONE).run('go')


async def test_a_reasoning_only_response_gets_a_retry_prompt_saying_what_to_do() -> None:
    model, sent = scripted(ModelResponse([ThinkingPart('hmm')]), ModelResponse([TextPart('done')]))
    assert (await Agent(model).run('go')).output == 'done'
    retry = sent[-1][-1].parts[0]
    assert isinstance(retry, RetryPromptPart)
    assert retry.content == 'Please return text.'

    model, sent = scripted(
        ModelResponse([ThinkingPart('hmm')]), ModelResponse([ToolCallPart('final_result', {'response': 3})])
    )
    assert (await Agent(model, output_type=int).run('go')).output == 3
    # A plain type leaves the output mode to the model, whose mode may be text (pydantic-ai 2.x's 'auto').
    retry = sent[-1][-1].parts[0]
    assert isinstance(retry, RetryPromptPart)
    assert retry.content == 'Please return text or include your response in a tool call.'

    model, sent = scripted(ModelResponse([ThinkingPart('hmm')]), ModelResponse([TextPart('ok')]))
    agent = Agent(model)

    @agent.tool_plain
    def helper() -> str:  # pragma: no cover - offered, never called
        return 'x'

    assert (await agent.run('go')).output == 'ok'
    assert sent[-1][-1].parts[0].content == 'Please return text or call a tool.'  # type: ignore[union-attr]


async def test_an_empty_response_after_text_with_tool_calls_asks_for_text_again() -> None:
    # pydantic-ai 2.x: the text sent with the tool calls is not taken as the output (1.x took it).
    model, sent = scripted(
        ModelResponse([TextPart('The answer is 4.'), ToolCallPart('noop', {})]),
        ModelResponse([]),
        ModelResponse([TextPart('4')]),
    )
    agent = Agent(model)

    @agent.tool_plain
    def noop() -> str:
        return 'ok'

    result = await agent.run('go')
    assert result.output == '4'
    assert len(sent) == 3
    retry = sent[-1][-1].parts[0]
    assert isinstance(retry, RetryPromptPart)
    assert retry.content == 'Please return text or call a tool.'


async def test_output_types_of_one_name_get_distinct_tools_and_each_validates() -> None:
    agent = Agent(TestModel(), output_type=LISTS)
    names: list[list[str]] = []

    def pick_second(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        names.append([t.name for t in info.output_tools])
        return ModelResponse([ToolCallPart('final_result_list_2', {'response': [1, 2]})])

    result = await agent.run('go', model=FunctionModel(pick_second))
    assert names == [['final_result_list', 'final_result_list_2']]
    assert result.output == [1, 2]


async def test_prompted_output_without_a_template_adds_no_instructions() -> None:
    seen: list[str | None] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(info.instructions)
        return ModelResponse([TextPart('{"answer": "yes"}')])

    result = await Agent(FunctionModel(answer), output_type=PromptedOutput(Bar, template=False)).run('go')
    assert result.output == Bar(answer='yes')
    assert seen == [None]
    await Agent(FunctionModel(answer), output_type=PromptedOutput(Bar)).run('go')
    assert '"answer"' in str(seen[-1])


_FOO_DEFS = {
    'Bar': {
        'properties': {'answer': {'title': 'Answer', 'type': 'string'}},
        'required': ['answer'],
        'title': 'Bar',
        'type': 'object',
    }
}
_FOO = {
    'properties': {
        'a': {'items': {'$ref': '#/$defs/Bar'}, 'title': 'A', 'type': 'array'},
        'b': {'title': 'B', 'type': 'integer'},
    },
    'required': ['a', 'b'],
    'title': 'Foo',
    'type': 'object',
}


def _shout(text: str) -> str:
    return text.upper()  # pragma: no cover


def _int_function(x: int) -> int:
    return x  # pragma: no cover


def _untyped_function(x: int):  # the point: no return type
    return x  # pragma: no cover


@pytest.mark.parametrize(
    ('output_type', 'expected'),
    [
        (str, {'type': 'string'}),
        (TextOutput(_shout), {'type': 'string'}),
        ([_int_function], {'type': 'integer'}),
        ([_untyped_function], {'type': 'string'}),
        (bool | int, {'anyOf': [{'type': 'boolean'}, {'type': 'integer'}]}),
        ([ToolOutput(bool), ToolOutput(bool)], {'type': 'boolean'}),
        (NativeOutput([bool]), {'type': 'boolean'}),
        (PromptedOutput([bool, Foo]), {'anyOf': [{'type': 'boolean'}, _FOO], '$defs': _FOO_DEFS}),
        (str | bool | Foo, {'anyOf': [{'type': 'string'}, {'type': 'boolean'}, _FOO], '$defs': _FOO_DEFS}),
    ],
    ids=[
        'str',
        'text-output',
        'function',
        'untyped-function',
        'union',
        'tool-outputs',
        'native',
        'prompted',
        'mixed',
    ],
)
def test_output_json_schema_is_the_schema_of_the_output_values(output_type: Any, expected: dict[str, Any]) -> None:
    assert Agent(TestModel(), output_type=output_type).output_json_schema() == expected


def test_output_json_schema_of_another_output_type_and_of_a_structured_dict() -> None:
    agent = Agent(TestModel())
    assert agent.output_json_schema(output_type=[ToolOutput(bool)]) == {'type': 'boolean'}
    human = StructuredDict({'type': 'object', 'properties': {'name': {'type': 'string'}}}, name='Human')
    assert agent.output_json_schema(output_type=human) == {
        'type': 'object',
        'properties': {'name': {'type': 'string'}},
        'title': 'Human',
    }


def test_output_json_schema_keeps_different_definitions_of_one_name_apart() -> None:
    class First(pydantic.BaseModel):
        item: Bar

    def other_bar() -> type[pydantic.BaseModel]:
        class Bar(pydantic.BaseModel):
            count: int

        return Bar

    class Second(pydantic.BaseModel):
        item: other_bar()  # type: ignore[valid-type]

    schema = Agent(TestModel(), output_type=[First, Second]).output_json_schema()
    # The second definition of a name is renamed `<title of its schema>_<name>_1`, as in pydantic-ai.
    assert sorted(schema['$defs']) == ['Bar', 'Second_Bar_1']
    assert schema['anyOf'][0]['properties']['item'] == {'$ref': '#/$defs/Bar'}
    assert schema['anyOf'][1]['properties']['item'] == {'$ref': '#/$defs/Second_Bar_1'}
    assert schema['$defs']['Second_Bar_1']['properties'] == {'count': {'title': 'Count', 'type': 'integer'}}


@pytest.mark.parametrize(
    ('strategy', 'ran', 'statuses'),
    [
        ('early', ['first'], ['Final result processed.', 'Output tool not used - a final result was already processed.',
                              'Tool not executed - a final result was already processed.']),
        ('graceful', ['first', 'helper'], ['Final result processed.',
                                           'Output tool not used - a final result was already processed.', 'helped']),
        (
            'exhaustive',
            ['first', 'helper', 'second'],
            [
                'Final result processed.',
                'Output tool processed, but its value will not be the final result of the agent run.',
                'helped',
            ],
        ),
    ],
)  # fmt: skip
async def test_end_strategies_after_the_output(strategy: Any, ran: list[str], statuses: list[str]) -> None:
    called: list[str] = []

    def first(value: str) -> str:
        called.append('first')
        return value

    def second(value: str) -> str:
        called.append('second')
        return value

    model, _ = scripted(
        ModelResponse(
            [
                ToolCallPart('first_output', {'value': 'a'}, 'c1'),
                ToolCallPart('second_output', {'value': 'b'}, 'c2'),
                ToolCallPart('helper', {}, 'c3'),
            ]
        )
    )
    agent = Agent(
        model,
        output_type=[ToolOutput(first, name='first_output'), ToolOutput(second, name='second_output')],
        end_strategy=strategy,
    )

    @agent.tool_plain
    def helper() -> str:
        called.append('helper')
        return 'helped'

    result = await agent.run('go')
    assert result.output == 'a'
    # 'exhaustive' runs them all at once (pydantic-ai 2.x): in no set order.
    assert (sorted(called) if strategy == 'exhaustive' else called) == ran
    assert [part.content for part in result.all_messages()[-1].parts] == statuses  # type: ignore[union-attr]


def _count(x: int) -> str:
    return str(x)  # pragma: no cover


@pytest.mark.parametrize(
    ('output_type', 'message'),
    [
        ([str, str], 'Only one `str` or `TextOutput` is allowed.'),
        ([str, TextOutput(_shout)], 'Only one `str` or `TextOutput` is allowed.'),
        (TextOutput(_count), 'TextOutput must take a function taking a single `str` argument'),
        (None, 'At least one output type must be provided other than `None`.'),
        ([], 'At least one output type must be provided.'),
    ],
)
def test_output_types_pydantic_ai_rejects_are_user_errors(output_type: Any, message: str) -> None:
    with pytest.raises(UserError) as info:
        Agent(TestModel(), output_type=output_type)
    assert str(info.value) == message


def test_a_run_output_type_cannot_be_combined_with_output_validators() -> None:
    agent = Agent(TestModel())

    @agent.output_validator
    def keep(value: Any) -> Any:
        return value  # pragma: no cover

    with pytest.raises(UserError, match='Cannot set a custom run `output_type` when the agent has output validators'):
        agent.run_sync('go', output_type=int)


async def test_text_answering_an_explicit_tool_output_gets_a_retry_prompt_asking_for_the_tool() -> None:
    model, _ = scripted(
        ModelResponse(parts=[TextPart('{"answer": "one"}')]),
        ModelResponse(parts=[ToolCallPart('final_result', {'answer': 'two'})]),
    )
    result = await Agent(model, output_type=ToolOutput(Bar)).run('go')
    assert result.output == Bar(answer='two')
    retry = result.all_messages()[2].parts[0]
    assert isinstance(retry, RetryPromptPart)
    assert retry.content == 'Please include your response in a tool call.'


async def test_json_text_answering_a_plain_output_type_is_the_output() -> None:
    # pydantic-ai's 'auto' output: a model that answers in JSON text rather than with the tool is taken at its word.
    model, _ = scripted(ModelResponse(parts=[TextPart('{"answer": "one"}')]))
    result = await Agent(model, output_type=Bar).run('go')
    assert result.output == Bar(answer='one')


@pytest.mark.parametrize(
    ('budget', 'second'),
    [
        (0, 'Output tool not used - output function execution failed.'),  # no retry left: only noted
        (2, 'Second output refused'),  # a retry prompt, though the output is given
    ],
)
async def test_exhaustive_a_later_output_function_asking_for_a_retry(budget: int, second: str) -> None:
    def first(value: str) -> str:
        return value

    def refuse(value: str) -> str:
        raise ModelRetry('Second output refused')

    model, _ = scripted(
        ModelResponse(parts=[ToolCallPart('first', {'value': 'ok'}), ToolCallPart('second', {'value': 'no'})])
    )
    agent = Agent(
        model,
        output_type=[ToolOutput(first, name='first'), ToolOutput(refuse, name='second')],
        end_strategy='exhaustive',
        retries={'output': budget},
    )
    result = await agent.run('go')
    assert result.output == 'ok'
    parts = result.all_messages()[2].parts
    assert [getattr(p, 'content', None) for p in parts] == ['Final result processed.', second]


@pytest.mark.parametrize(
    ('strategy', 'expected'),
    [
        (
            'early',
            [
                ('OutputToolCallEvent', 'bad', False),  # only the output tool events (pydantic-ai 2.x)
                ('OutputToolResultEvent', 'bad', None),
                ('OutputToolCallEvent', 'good', True),
                ('OutputToolResultEvent', 'good', None),
                ('OutputToolCallEvent', 'late', None),  # skipped: the output was given
                ('OutputToolResultEvent', 'late', None),
                # the helper's call, skipped by 'early', gives no event
            ],
        ),
        (
            'exhaustive',
            [
                ('OutputToolCallEvent', 'bad', False),
                ('OutputToolResultEvent', 'bad', None),
                ('OutputToolCallEvent', 'good', True),
                ('OutputToolResultEvent', 'good', None),
                ('OutputToolCallEvent', 'late', True),
                ('OutputToolResultEvent', 'late', None),
                ('FunctionToolCallEvent', 'helper', True),
                ('FunctionToolResultEvent', 'helper', None),
            ],
        ),
    ],
)
async def test_output_call_events_come_first_each_with_its_result(strategy: Any, expected: list[Any]) -> None:
    model, _ = scripted(
        ModelResponse(
            parts=[
                ToolCallPart('final_result', {'wrong': 'field'}, tool_call_id='bad'),
                ToolCallPart('helper', {}, tool_call_id='helper'),
                ToolCallPart('final_result', {'answer': 'yes'}, tool_call_id='good'),
                ToolCallPart('final_result', {'answer': 'also'}, tool_call_id='late'),
            ]
        )
    )
    agent = Agent(model, output_type=Bar, end_strategy=strategy)

    @agent.tool_plain
    def helper() -> str:
        return 'helped'

    seen: list[tuple[str, str, bool | None]] = []
    async with agent.iter('go') as run:
        async for node in run:
            if Agent.is_call_tools_node(node):
                async with node.stream(run.ctx) as events:
                    async for event in events:
                        call_id = getattr(getattr(event, 'part', None), 'tool_call_id', '')
                        seen.append((type(event).__name__, call_id, getattr(event, 'args_valid', None)))
    assert seen == expected


async def test_tool_call_events_and_results_come_in_call_order_unknown_tools_included() -> None:
    # pydantic-ai 2.x (1.x gave the call events of known tools first).
    model, _ = scripted(
        ModelResponse(
            parts=[ToolCallPart('missing', {}, tool_call_id='u'), ToolCallPart('double', {'x': 5}, tool_call_id='k')]
        ),
        ModelResponse(parts=[TextPart('done')]),
    )
    agent = Agent(model)

    @agent.tool_plain
    def double(x: int) -> int:
        return x * 2

    seen: list[tuple[str, str]] = []
    async with agent.iter('go') as run:
        async for node in run:
            if Agent.is_call_tools_node(node):
                async with node.stream(run.ctx) as events:
                    async for event in events:
                        seen.append((type(event).__name__, getattr(getattr(event, 'part', None), 'tool_call_id', '')))
    assert seen == [
        ('FunctionToolCallEvent', 'u'),
        ('FunctionToolCallEvent', 'k'),
        ('FunctionToolResultEvent', 'u'),
        ('FunctionToolResultEvent', 'k'),
    ]


def test_tool_event_base_classes_match_both_kinds_of_call() -> None:
    call = ToolCallPart('t', {}, tool_call_id='c')
    ret = ToolReturnPart('t', 'ok', tool_call_id='c')
    events = [FunctionToolCallEvent(call), OutputToolCallEvent(call, args_valid=True)]
    assert all(isinstance(e, ToolCallEvent) and e.tool_call_id == 'c' for e in events)
    results = [FunctionToolResultEvent(ret), OutputToolResultEvent(ret)]
    assert all(isinstance(r, ToolResultEvent) and r.tool_call_id == 'c' for r in results)
    assert not isinstance(events[0], ToolResultEvent)
