"""Models: infer_model, the request guard, TestModel and FunctionModel."""

from __future__ import annotations

from typing import Any, Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel, create_model

from edgewise.agent import Agent, UserError, models
from edgewise.agent.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    UserPromptPart,
)
from edgewise.agent.models import Model, ModelRequestParameters, check_allow_model_requests, infer_model
from edgewise.agent.models._usage_estimate import UsageEstimator, estimate_tokens
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.test import TestModel, _JsonSchemaTestData
from edgewise.agent.output import NativeOutput
from edgewise.agent.tools import ToolDefinition
from edgewise.agent.usage import RequestUsage

from .._helpers import NOW

pytestmark = pytest.mark.anyio


def test_infer_model_accepts_models_and_test_and_explains_provider_names() -> None:
    model = TestModel()
    assert infer_model(model) is model
    assert isinstance(infer_model('test'), TestModel)
    with pytest.raises(UserError, match=r"Model provider 'typesafe' \(for model 'claude'\) is not available"):
        infer_model('typesafe:claude')
    with pytest.raises(UserError, match=r"Unknown model provider 'acme' in model name 'acme:x'\."):
        infer_model('acme:x')
    with pytest.raises(UserError, match=r"Unknown model: 'gpt'\. A model name needs its provider: .*'openai:gpt'"):
        infer_model('gpt')


def test_model_requests_can_be_forbidden(monkeypatch: pytest.MonkeyPatch) -> None:
    check_allow_model_requests()
    monkeypatch.setattr(models, 'ALLOW_MODEL_REQUESTS', False)
    with pytest.raises(RuntimeError, match='Model requests are not allowed, since ALLOW_MODEL_REQUESTS is False'):
        check_allow_model_requests()


async def test_models_without_streaming_say_so() -> None:
    class RequestOnly(TestModel):
        request_stream = Model.request_stream

    with pytest.raises(NotImplementedError, match=r'Streamed requests are not supported by RequestOnly yet\.'):
        async with RequestOnly().request_stream([], None, ModelRequestParameters()):
            pass  # pragma: no cover


def test_model_labels_and_parameters_repr() -> None:
    model = TestModel(settings={'temperature': 0.5})
    assert (model.label, model.settings, repr(model)) == (
        'test:test',
        {'temperature': 0.5},
        "TestModel(model_name='test')",
    )
    params = ModelRequestParameters(function_tools=[ToolDefinition(name='a')], output_tools=[ToolDefinition(name='b')])
    assert list(params.tool_defs) == ['a', 'b']
    assert repr(params).startswith("ModelRequestParameters(function_tools=[ToolDefinition(name='a'")


async def test_test_model_calls_every_tool_then_gives_structured_output() -> None:
    class Out(BaseModel):
        x: int
        y: str

    agent = Agent(TestModel(), output_type=Out)

    @agent.tool_plain
    def tt(a: int, b: str = 'q') -> str:
        return f'{a}{b}'

    result = await agent.run('hi')
    assert result.output == Out(x=0, y='a')
    assert [m.parts for m in result.all_messages()][1] == [ToolCallPart('tt', {'a': 0}, 'pyd_ai_tool_call_id__tt')]
    assert [m.usage for m in result.all_messages() if isinstance(m, ModelResponse)] == [
        RequestUsage(input_tokens=51, output_tokens=4),
        RequestUsage(input_tokens=52, output_tokens=11),
    ]


async def test_test_model_text_output_is_the_json_of_tool_returns_or_a_fixed_text() -> None:
    agent = Agent('test')

    @agent.tool_plain
    def tt(a: int) -> str:
        return f'{a}q'

    assert (await agent.run('hi')).output == '{"tt":"0q"}'
    assert (await Agent('test').run('hi')).output == 'success (no tool calls)'
    assert (await Agent(TestModel(custom_output_text='hello')).run('hi')).output == 'hello'


async def test_test_model_calls_only_the_named_tools_and_retries_failed_ones() -> None:
    calls: list[str] = []
    agent = Agent(TestModel(call_tools=['b']), retries=2)

    @agent.tool_plain
    def a() -> None:  # pragma: no cover - not in call_tools
        calls.append('a')

    @agent.tool_plain
    def b(n: int) -> int:
        calls.append('b')
        if len(calls) == 1:
            from edgewise.agent import ModelRetry

            raise ModelRetry('again')
        return n

    assert (await agent.run('hi')).output == '{"b":0}'
    assert calls == ['b', 'b']


async def test_test_model_custom_output_args_and_native_output() -> None:
    result = await Agent(TestModel(custom_output_args=7), output_type=int).run('x')
    assert result.output == 7

    class City(BaseModel):
        name: str

    assert (await Agent(TestModel(), output_type=NativeOutput(City)).run('x')).output == City(name='a')
    custom = TestModel(custom_output_args={'name': 'Rome'})
    assert (await Agent(custom, output_type=NativeOutput(City)).run('x')).output == City(name='Rome')
    assert custom.last_model_request_parameters is not None
    assert custom.last_model_request_parameters.output_mode == 'native'


@pytest.mark.parametrize(
    ('schema', 'value'),
    [
        ({'type': 'object', 'properties': {'a': {'$ref': '#/$defs/E'}}, 'required': ['a'],
          '$defs': {'E': {'enum': ['x', 'y']}}}, {'a': 'x'}),
        ({'const': 3}, 3),
        ({'anyOf': [{'type': 'integer'}, {'type': 'null'}]}, 0),
        ({'type': 'string', 'default': 'd'}, 'a'),  # as pydantic-ai: a default is not used
        ({'type': ['number', 'null']}, 0.0),
        ({'type': 'array', 'items': {'type': 'boolean'}}, [False]),
        ({'type': 'array'}, []),
        ({'type': 'null'}, None),
        ({}, 'a'),
    ],
)  # fmt: skip
def test_made_up_values_follow_the_schema(schema: dict[str, Any], value: Any) -> None:
    assert _JsonSchemaTestData(schema).generate() == value


async def test_function_model_passes_the_request_info_and_names_itself() -> None:
    infos: list[AgentInfo] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        infos.append(info)
        return ModelResponse(parts=[TextPart('ok')], usage=RequestUsage(input_tokens=3))

    agent = Agent(FunctionModel(answer), instructions='be brief', model_settings={'temperature': 0.1})
    result = await agent.run('x', model_settings={'seed': 1})
    assert infos[0].model_settings == {'temperature': 0.1, 'seed': 1}
    assert (infos[0].instructions, infos[0].allow_text_output, infos[0].function_tools) == ('be brief', True, [])
    response = result.all_messages()[1]
    assert isinstance(response, ModelResponse)
    assert (response.model_name, response.usage) == ('function:answer:', RequestUsage(input_tokens=3))
    assert agent.model is not None
    assert FunctionModel(answer).model_name == 'function:answer:'


async def test_function_model_rejects_what_is_not_a_response() -> None:
    def bad(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return 'text'  # type: ignore[return-value]

    with pytest.raises(
        UserError, match=r"The function of FunctionModel 'function:bad:' returned 'text', not a ModelResponse\."
    ):
        await Agent(FunctionModel(bad)).run('x')


async def test_function_model_needs_a_function_for_non_streamed_runs() -> None:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> Any:  # pragma: no cover - never called
        yield 'x'

    model = FunctionModel(stream_function=stream, model_name='streamer')
    assert (model.model_name, model.system) == ('streamer', 'function')
    with pytest.raises(UserError, match="FunctionModel 'streamer' has only a `stream_function`"):
        await Agent(model).run('x')
    with pytest.raises(TypeError, match='Either `function` or `stream_function` must be provided'):
        FunctionModel()


def test_usage_estimates_are_incremental_and_survive_a_rewritten_history() -> None:
    estimator = UsageEstimator()
    history: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart('one two')])]
    answer = ModelResponse(parts=[TextPart('three'), ThinkingPart('four five')])
    assert estimator.estimate(history, answer) == RequestUsage(input_tokens=52, output_tokens=3)
    history += [answer, ModelRequest(parts=[RetryPromptPart('bad', tool_name='t')])]
    assert estimator.estimate(history, ModelResponse(parts=[])) == RequestUsage(input_tokens=60, output_tokens=3)
    history[-1] = ModelRequest(parts=[UserPromptPart('six')])  # the last counted message replaced: recount
    assert estimator.estimate(history, ModelResponse(parts=[])) == RequestUsage(input_tokens=53, output_tokens=3)
    del history[1:]  # truncated: recount
    assert estimator.estimate(history, ModelResponse(parts=[])) == RequestUsage(input_tokens=52, output_tokens=0)
    conversations: list[list[ModelMessage]] = [[ModelRequest(parts=[])] for _ in range(20)]
    for conversation in conversations:  # more conversations than the estimator remembers
        estimator.estimate(conversation, ModelResponse(parts=[]))
    assert estimator.estimate(conversations[0], ModelResponse(parts=[])) == RequestUsage(input_tokens=50)
    assert estimate_tokens(['a b', 'c']) == 3
    assert estimate_tokens('') == 0


def test_model_subclasses_must_implement_the_interface() -> None:
    class Partial(Model):
        pass

    with pytest.raises(TypeError, match="Can't instantiate abstract class Partial"):
        Partial()  # type: ignore[abstract]


def test_the_test_model_is_not_collected_as_a_test() -> None:
    assert TestModel.__test__ is False
    assert NOW is not None


_FIELD_TYPES: list[Any] = [int, str, float, bool, list[int], list[str], dict[str, int], int | None, Literal['a', 'b']]


@given(st.lists(st.sampled_from(_FIELD_TYPES), min_size=0, max_size=5), st.integers(0, 50), st.booleans())
def test_made_up_arguments_always_validate_against_their_schema(types: list[Any], seed: int, nested: bool) -> None:
    fields: dict[str, Any] = {f'f{i}': (tp, ...) for i, tp in enumerate(types)}
    if nested:
        fields['inner'] = (create_model('Inner', x=(int, ...), tags=(list[str], ...)), ...)
    model = create_model('Args', **fields)
    model.model_validate(_JsonSchemaTestData(model.model_json_schema(), seed).generate())


async def test_test_model_prefers_text_when_text_is_an_accepted_output() -> None:
    class Point(BaseModel):
        x: int

    text_or_point: Any = [str, Point]
    assert (await Agent(TestModel(), output_type=text_or_point).run('x')).output == 'success (no tool calls)'
    picked = await Agent(TestModel(custom_output_args={'x': 3}), output_type=text_or_point).run('x')
    assert picked.output == Point(x=3)


async def test_function_model_names_its_responses_whatever_the_function_set() -> None:
    from edgewise.agent import Agent
    from edgewise.agent.messages import ModelResponse, TextPart
    from edgewise.agent.models.function import FunctionModel

    def answer(messages: Any, info: Any) -> ModelResponse:
        return ModelResponse([TextPart('hi')], model_name='made-up')

    result = await Agent(FunctionModel(answer)).run('x')
    assert result.response.model_name == 'function:answer:'
    result = await Agent(FunctionModel(answer, model_name='named')).run('x')
    assert result.response.model_name == 'named'
