"""The shortcuts a model request step takes to cost less (its parameters built without their `__init__`, one
request's parts read without a generator, no deadline started without a setting, the visibility of no tools, the
prices wanted, no settings change looked for without a setting, no toolset asked for instructions or its step's
toolset when its classes keep the default methods, the first request made without its `__init__`, no span without
tracing), and the text answer taken as the output as it is, give what the long way gives."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import anyio
import pytest
from pydantic import BaseModel

from edgewise.agent import Agent, InstructionPart, ModelRequestTimeout, NativeOutput, RunContext, TextOutput
from edgewise.agent._loop.call_tools_parts import answer_text, text_as_is
from edgewise.agent._loop.history import has_tool_deltas, record_settings_change, request_has_tool_deltas
from edgewise.agent._loop.node_support import prices_wanted, prompt_request
from edgewise.agent._loop.step_tool_manager import run_tool_manager
from edgewise.agent._output.schema import OutputSchema, TextOutputSchema, build_output_schema
from edgewise.agent._tools.definition import ToolDefinition
from edgewise.agent.capabilities import AbstractCapability
from edgewise.agent.exceptions import ModelRetry, SkipModelRequest, UserError
from edgewise.agent.messages import (
    BinaryImage,
    CapabilityLoadDeltaPart,
    CompactionPart,
    FilePart,
    InstructionDeltaPart,
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    ModelSettingsDeltaPart,
    NativeToolCallPart,
    RetryPromptPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolAvailabilityDeltaPart,
    ToolCallPart,
    UserPromptPart,
)
from edgewise.agent.models import ModelRequestContext, ModelRequestParameters
from edgewise.agent.models._native_support import resolve_model_tools
from edgewise.agent.models._request_parameters import agent_request_parameters
from edgewise.agent.models._request_timeout import timed_request
from edgewise.agent.models._thinking import resolve_thinking
from edgewise.agent.models._usage_estimate import _SPLIT_RE, estimate_tokens
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.test import TestModel
from edgewise.agent.output import OutputObjectDefinition
from edgewise.agent.profiles import ModelProfile
from edgewise.agent.settings import ModelSettings
from edgewise.agent.tool_manager import TOOL_HOOKS, ToolManager
from edgewise.agent.toolsets import AbstractToolset, CombinedToolset, FunctionToolset, PrefixedToolset, WrapperToolset
from edgewise.agent.toolsets._default_methods import gives_no_instructions, same_every_step
from edgewise.agent.usage import RequestUsage, RunUsage

pytestmark = pytest.mark.anyio

TOOL = ToolDefinition(name='probe', parameters_json_schema={'type': 'object', 'properties': {}})


def _given() -> dict[str, Any]:
    return {
        'function_tools': [TOOL],
        'output_mode': 'prompted',
        'output_object': OutputObjectDefinition(json_schema={'type': 'object'}, name='Town'),
        'output_tools': [],
        'prompted_output_template': 'Answer as {schema}',
        'allow_text_output': True,
        'allow_image_output': True,
        'instruction_parts': [InstructionPart('Be brief.')],
    }


def test_agent_request_parameters_equal_those_of_the_constructor_field_for_field_in_order() -> None:
    given = _given()
    fast = agent_request_parameters(**given)
    made = ModelRequestParameters(**given)
    assert type(fast) is ModelRequestParameters
    assert list(vars(fast)) == list(vars(made)) == [f.name for f in dataclasses.fields(ModelRequestParameters)]
    assert vars(fast) == vars(made)
    assert fast == made
    assert repr(fast) == repr(made)
    assert fast.prompted_output_instructions == made.prompted_output_instructions


def test_agent_request_parameters_get_mutable_defaults_of_their_own() -> None:
    first, second = agent_request_parameters(**_given()), agent_request_parameters(**_given())
    first.native_tools.append(object())  # type: ignore[arg-type]
    first.revealed_tool_names.add('probe')
    assert (second.native_tools, second.revealed_tool_names) == ([], set())


@pytest.mark.parametrize(
    'part',
    [
        UserPromptPart('hi'),
        SystemPromptPart('rules'),
        SystemPromptPart('this request only', scope='request'),
        SystemPromptPart('stated', context_id='ctx-1'),
        ToolAvailabilityDeltaPart(tools_added=['probe']),
        CapabilityLoadDeltaPart(loaded=['cap']),
        ModelSettingsDeltaPart(settings={'thinking': 'low'}),
        InstructionDeltaPart(id=None, content='changed'),
    ],
    ids=lambda part: f'{part.part_kind}-{getattr(part, "scope", "")}-{getattr(part, "context_id", "")}',
)
def test_one_requests_tool_deltas_are_read_as_the_whole_history_reads_them(part: ModelRequestPart) -> None:
    for parts in ([part], [UserPromptPart('first'), part], [part, UserPromptPart('after')]):
        request = ModelRequest(parts)
        long_way = any(
            isinstance(
                p, ToolAvailabilityDeltaPart | CapabilityLoadDeltaPart | ModelSettingsDeltaPart | InstructionDeltaPart
            )
            or (isinstance(p, SystemPromptPart) and (p.scope == 'request' or p.context_id is not None))
            for p in request.parts
        )
        assert request_has_tool_deltas(request) is long_way
        assert has_tool_deltas([request]) is long_way
        history: list[ModelMessage] = [ModelRequest([UserPromptPart('x')]), ModelResponse([TextPart('y')]), request]
        assert has_tool_deltas(history) is long_way
    expected = not isinstance(part, UserPromptPart) and not (
        isinstance(part, SystemPromptPart) and part.scope == 'conversation' and part.context_id is None
    )
    assert request_has_tool_deltas(ModelRequest([part])) is expected


def test_an_empty_request_holds_no_tool_delta() -> None:
    assert request_has_tool_deltas(ModelRequest([])) is False
    assert has_tool_deltas([]) is False


@pytest.mark.parametrize('system', ['test', 'function', 'openai', 'anthropic'])
def test_prices_are_wanted_for_priced_providers_until_loaded(system: str) -> None:
    from edgewise.agent._cost import priced_provider, prices_loaded

    assert prices_wanted(system) is (not prices_loaded() and priced_provider(system))
    assert prices_wanted('test') is False


def test_a_request_without_tools_resolves_to_an_empty_visibility_like_one_with_tools() -> None:
    bare = ModelRequestParameters(output_mode='text')
    resolved = resolve_model_tools(bare, frozenset())
    assert resolved is not bare
    assert resolved.tool_visibility == {}
    assert vars(resolved) == {**vars(bare), 'tool_visibility': {}}
    assert bare.tool_visibility is None  # the parameters given are left as they are
    with_tool = resolve_model_tools(ModelRequestParameters(function_tools=[TOOL]), frozenset())
    assert with_tool.tool_visibility == {'probe': 'visible'}
    hidden = dataclasses.replace(TOOL, defer_loading=True)
    assert resolve_model_tools(ModelRequestParameters(function_tools=[hidden]), frozenset()).tool_visibility == {
        'probe': 'withheld'
    }


async def _never(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    await anyio.sleep_forever()
    raise AssertionError


async def test_a_models_own_request_timeout_applies_to_a_request_sent_without_settings() -> None:
    model = FunctionModel(_never, model_name='slow', settings={'request_timeout': 0.05})
    with pytest.raises(ModelRequestTimeout), anyio.fail_after(30):  # (a request with no deadline fails, not hangs)
        await timed_request(model, [ModelRequest([UserPromptPart('hi')])], None, ModelRequestParameters())


async def test_a_request_without_any_setting_is_sent_as_it_is() -> None:
    model = TestModel()
    response = await timed_request(model, [ModelRequest([UserPromptPart('hi')])], None, ModelRequestParameters())
    assert response.parts == [TextPart('success (no tool calls)')]
    assert model.settings is None


async def test_an_agent_without_instructions_sends_none_and_one_with_them_sends_them() -> None:
    bare = TestModel()
    await Agent(bare).run('hi')
    assert bare.last_model_request_parameters is not None
    assert bare.last_model_request_parameters.instruction_parts is None
    instructed = TestModel()
    agent = Agent(instructed, instructions='Be brief.')

    @agent.instructions
    def more(ctx: RunContext[None]) -> str:
        return 'And kind.'

    result = await agent.run('hi')
    first = result.all_messages()[0]
    assert isinstance(first, ModelRequest)
    assert first.instructions == 'Be brief.\n\nAnd kind.'
    bare_result = await Agent(TestModel()).run('hi')
    first = bare_result.all_messages()[0]
    assert isinstance(first, ModelRequest)
    assert first.instructions is None


class Town(BaseModel):
    name: str


def _shout(text: str) -> str:
    return text.upper()


class _Echoing(TextOutputSchema[Any]):
    async def process_text(self, text: str, ctx: RunContext[Any]) -> Any:
        return f'echo: {text}'


@pytest.mark.parametrize(
    ('output_type', 'as_is'),
    [(str, True), (Town | str, True), (TextOutput(_shout), False), (Town, False), (NativeOutput(Town), False)],
    ids=['str', 'tool-or-text', 'text-output', 'tool', 'native'],
)
def test_a_schema_takes_text_as_is_only_where_process_text_returns_it(output_type: Any, as_is: bool) -> None:
    schema: OutputSchema[Any] = build_output_schema(output_type)
    assert schema.takes_text_as_is is as_is


def test_a_schema_that_processes_text_its_own_way_does_not_take_it_as_is() -> None:
    assert TextOutputSchema().takes_text_as_is is True
    assert _Echoing().takes_text_as_is is False


class _Shouting(AbstractCapability[Any]):
    async def after_output_process(self, ctx: RunContext[Any], *, output_context: Any, output: Any) -> Any:
        return output.upper()


async def test_a_text_answer_still_goes_through_functions_validators_and_hooks() -> None:
    assert (await Agent(TestModel(custom_output_text='plain')).run('hi')).output == 'plain'
    assert (await Agent(TestModel(custom_output_text='fn'), output_type=TextOutput(_shout)).run('hi')).output == 'FN'
    validated = Agent(TestModel(custom_output_text='checked'))

    @validated.output_validator
    def exclaim(output: str) -> str:
        return f'{output}!'

    assert (await validated.run('hi')).output == 'checked!'
    hooked = Agent(TestModel(custom_output_text='hooked'), capabilities=[_Shouting()])
    assert (await hooked.run('hi')).output == 'HOOKED'


@pytest.mark.parametrize(
    ('model_settings', 'run_settings'),
    [(None, None), ({'thinking': 'low'}, None), (None, {'thinking': 'high'}), ({'temperature': 0.5}, None)],
    ids=['none', 'model-thinking', 'run-thinking', 'other-setting'],
)
async def test_a_settings_change_is_recorded_as_without_the_shortcut(
    model_settings: ModelSettings | None, run_settings: ModelSettings | None
) -> None:
    model = TestModel(settings=model_settings)
    result = await Agent(model).run('hi', model_settings=run_settings)
    first = result.all_messages()[0]
    assert isinstance(first, ModelRequest)
    deltas = [p for p in first.parts if isinstance(p, ModelSettingsDeltaPart)]
    wanted: Any = {**(model_settings or {}), **(run_settings or {})}.get('thinking')
    assert deltas == ([ModelSettingsDeltaPart(settings={'thinking': wanted}, top_level=True)] if wanted else [])


async def test_test_model_resolves_a_request_with_tools_and_one_without_alike() -> None:
    model = TestModel()
    agent = Agent(model)
    await agent.run('hi')
    assert model.last_model_request_parameters is not None
    assert model.last_model_request_parameters.tool_visibility == {}

    @agent.tool_plain
    def probe() -> str:
        return 'probed'

    await agent.run('hi')
    assert model.last_model_request_parameters.tool_visibility == {'probe': 'visible'}


def test_a_models_own_thinking_is_recorded_when_the_request_has_no_settings() -> None:
    history: list[ModelMessage] = [ModelRequest([UserPromptPart('hi')])]
    assert record_settings_change(history, TestModel(), None, False) is None
    assert len(history[0].parts) == 1
    event = record_settings_change(history, TestModel(settings={'thinking': 'low'}), None, False)
    assert event is not None
    assert event.part == ModelSettingsDeltaPart(settings={'thinking': 'low'}, top_level=True)
    assert history[0].parts[-1] is event.part


def test_test_models_responses_are_made_as_the_constructor_makes_them() -> None:
    from edgewise.agent._messages.usage_counts import token_usage
    from edgewise.agent.models.test import _response

    parts: list[Any] = [TextPart('answer')]
    usage = token_usage(51, 1)
    fast = _response(parts, usage, 'test', 'test')
    made = ModelResponse(parts=parts, usage=usage, model_name='test', provider_name='test')
    assert list(vars(fast)) == list(vars(made)) == [f.name for f in dataclasses.fields(ModelResponse)]
    assert {**vars(fast), 'timestamp': None} == {**vars(made), 'timestamp': None}
    assert fast.timestamp.tzinfo is not None
    assert fast.timestamp <= made.timestamp
    assert _response([], usage, 'test', 'test').timestamp is not fast.timestamp
    assert fast.usage is usage


class _Plain(AbstractToolset[Any]):
    """A toolset of the default methods but the abstract ones."""

    @property
    def id(self) -> str | None:
        return None

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, Any]:
        return {}

    async def call_tool(self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: Any) -> Any:
        raise AssertionError


class _Instructing(FunctionToolset[Any]):
    async def get_instructions(self, ctx: RunContext[Any]) -> Any:
        return 'Mine.'


@dataclasses.dataclass
class _Stepping(WrapperToolset[Any]):
    """A wrapper that gives each step a toolset of its own: one with the tool `late`."""

    async def for_run_step(self, ctx: RunContext[Any]) -> AbstractToolset[Any]:
        later = FunctionToolset[Any]()

        @later.tool_plain
        def late() -> str:
            return 'late'

        return WrapperToolset(later)


def _toolsets() -> list[tuple[str, AbstractToolset[Any], bool, bool]]:
    """Toolsets, with whether each is known to give no instructions and to be its own step's toolset."""
    bare = FunctionToolset[Any]()
    return [
        ('function', bare, True, True),
        ('function-with-instructions', FunctionToolset[Any](instructions='Use them.'), False, True),
        ('function-with-blank-function', FunctionToolset[Any](instructions=lambda: ''), False, True),
        ('wrapped', WrapperToolset(WrapperToolset(bare)), True, True),
        ('prefixed', PrefixedToolset(bare, prefix='p'), True, True),
        ('wrapped-instructions', WrapperToolset(FunctionToolset[Any](instructions='Use them.')), False, True),
        ('plain', _Plain(), True, True),
        ('overridden', _Instructing(), False, True),
        ('wrapped-overridden', WrapperToolset(_Instructing()), False, True),
        ('stepping', _Stepping(bare), True, False),
        ('combined', CombinedToolset([bare]), False, False),
    ]


@pytest.mark.parametrize(('name', 'toolset', 'no_instructions', 'same_step'), _toolsets(), ids=lambda v: str(v))
async def test_a_toolset_known_by_its_classes_answers_as_asking_it_would(
    name: str, toolset: AbstractToolset[Any], no_instructions: bool, same_step: bool
) -> None:
    assert (gives_no_instructions(toolset), same_every_step(toolset)) == (no_instructions, same_step)
    ctx = RunContext(deps=None, model=TestModel(), usage=RunUsage())
    if no_instructions:  # the shortcut holds only where asking gives nothing
        assert await toolset.get_instructions(ctx) is None
    if same_step:
        assert await toolset.for_run_step(ctx) is toolset


@pytest.mark.parametrize(
    ('toolset', 'instructions'),
    [
        (FunctionToolset[Any](instructions='Use the tools.'), 'Use the tools.'),
        (WrapperToolset(_Instructing()), 'Mine.'),
    ],
    ids=['function', 'overridden'],
)
async def test_a_toolsets_instructions_are_sent_by_an_agent_without_its_own(
    toolset: AbstractToolset[Any], instructions: str
) -> None:
    result = await Agent(TestModel(), toolsets=[toolset]).run('hi')
    first = result.all_messages()[0]
    assert isinstance(first, ModelRequest)
    assert first.instructions == instructions


async def test_a_toolset_that_changes_at_each_step_is_asked_for_it() -> None:
    model = TestModel(call_tools=[])
    await Agent(model, toolsets=[_Stepping(FunctionToolset[Any]())]).run('hi')
    assert model.last_model_request_parameters is not None
    assert [t.name for t in model.last_model_request_parameters.function_tools] == ['late']


@pytest.mark.parametrize(
    'parts',
    [[UserPromptPart('hi')], [SystemPromptPart('Be brief.'), UserPromptPart(['hi', 'there'])], []],
    ids=['prompt', 'system-and-prompt', 'none'],
)
def test_the_first_request_is_made_as_the_constructor_makes_it(parts: list[ModelRequestPart]) -> None:
    fast, made = prompt_request(parts), ModelRequest(parts)
    assert type(fast) is ModelRequest
    assert list(vars(fast)) == list(vars(made)) == [f.name for f in dataclasses.fields(ModelRequest)]
    assert vars(fast) == vars(made)
    assert fast == made
    assert repr(fast) == repr(made)
    assert fast.parts is parts


def _picture_and_text(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[TextPart('a picture'), FilePart(BinaryImage(b'\x89PNG', media_type='image/png'))])


async def test_an_image_is_the_output_before_the_text_taken_as_it_is() -> None:
    drawing = FunctionModel(_picture_and_text, profile=ModelProfile(supports_image_output=True))
    text_or_image: Any = str | BinaryImage
    result = await Agent(drawing, output_type=text_or_image).run('hi')
    assert isinstance(result.output, BinaryImage)
    result = await Agent(FunctionModel(_picture_and_text)).run('hi')
    assert result.output == 'a picture'


async def test_an_empty_text_answer_is_not_taken_as_it_is() -> None:
    answers = iter(['', 'at last'])

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(parts=[TextPart(next(answers))])

    result = await Agent(FunctionModel(answer)).run('hi')
    assert result.output == 'at last'
    assert any(isinstance(p, RetryPromptPart) for m in result.all_messages() for p in m.parts)


class _SameOutputTools(AbstractCapability[Any]):
    async def prepare_output_tools(self, ctx: RunContext[Any], tool_defs: list[ToolDefinition]) -> list[ToolDefinition]:
        return tool_defs


async def test_output_tools_without_a_hook_are_those_a_hook_that_keeps_them_gives() -> None:
    seen: list[list[ToolDefinition]] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(info.output_tools)
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, {'name': 'Ely'})])

    plain = await Agent(FunctionModel(answer), output_type=Town).run('hi')
    hooked = await Agent(FunctionModel(answer), output_type=Town, capabilities=[_SameOutputTools()]).run('hi')
    assert plain.output == hooked.output == Town(name='Ely')
    assert seen[0]
    assert seen[0] == seen[1]


def test_a_usage_of_a_class_not_seen_before_sums_its_extra_counters() -> None:
    @dataclasses.dataclass(repr=False, kw_only=True, init=False, eq=False)
    class _Metered(RequestUsage):
        pass

    run = RunUsage()
    run.incr(_Metered(input_tokens=1, future_tokens=2))
    run.incr(RequestUsage(input_tokens=1, future_tokens=3))
    assert (run.input_tokens, run.__dict__['future_tokens'], run.requests) == (2, 5, 2)


@pytest.mark.parametrize(
    'settings',
    [None, {}, {'thinking': 'low'}, {'thinking': False}, {'service_tier': 'flex'}, {'service_tier': 'bogus'}],
    ids=['none', 'empty', 'low', 'off', 'tier', 'bad-tier'],
)
def test_test_model_resolves_thinking_as_the_long_way(settings: ModelSettings | None) -> None:
    model = TestModel(profile=ModelProfile(supports_thinking=True))
    messages: list[ModelMessage] = [ModelRequest([UserPromptPart('hi')])]
    params = ModelRequestParameters()
    try:
        expected = resolve_thinking(settings or {}, resolve_model_tools(params, frozenset()), model.profile)
    except UserError as error:
        with pytest.raises(UserError, match=re.escape(str(error))):
            model._respond(messages, settings, params)
        return
    model._respond(messages, settings, params)
    assert model.last_model_request_parameters == expected


@pytest.mark.parametrize('with_tool', [False, True], ids=['bare', 'with-tool'])
async def test_the_runs_tool_manager_is_made_as_the_constructor_makes_it(with_tool: bool) -> None:
    agent = Agent(TestModel(), validation_context={'strict': True})
    if with_tool:

        @agent.tool_plain
        def probe() -> str:
            return 'probed'

    async with agent.iter('hi') as run:
        deps = run.ctx.deps
        fast = run_tool_manager(deps)
        made = ToolManager(
            deps.toolset,
            deps.root_capability,
            default_max_retries=deps.default_tool_retries,
            validation_context=deps.validation_context,
            tracing=deps.tracing,
            deferrals_are_span_errors=deps.instrumentation.version < 5,
            hooked=deps.hooked & TOOL_HOOKS,
            carry_over=False,
        )
    assert type(fast) is ToolManager
    assert list(vars(fast)) == list(vars(made)) == [f.name for f in dataclasses.fields(ToolManager)]
    assert vars(fast) == vars(made)
    assert fast.failed_tools is not run_tool_manager(deps).failed_tools  # a set of its own


@pytest.mark.parametrize(
    'parts',
    [
        [TextPart('answer')],
        [TextPart('')],
        [TextPart('a'), TextPart('b')],
        [ThinkingPart('hmm'), TextPart('answer')],
        [TextPart('before'), NativeToolCallPart('web_search', {}), TextPart('after')],
        [CompactionPart('the summary')],
    ],
    ids=['one-text', 'empty-text', 'two-texts', 'thinking', 'after-native-call', 'compaction'],
)
async def test_a_text_taken_as_it_is_is_the_text_answer(parts: list[Any]) -> None:
    async with Agent(TestModel()).iter('hi') as run:
        deps = run.ctx.deps
    response = ModelResponse(parts=parts)
    assert text_as_is(response, deps) == (answer_text(response) or None)


@pytest.mark.parametrize('text', ['hi', 'Zürich', 'x1', 'hi there', ' hi', 'hi!', '¹²', '٣', 'a_b'])
def test_a_single_words_token_count_is_that_of_the_long_way(text: str) -> None:
    assert estimate_tokens(text) == len(_SPLIT_RE.split(text.strip()))


@dataclasses.dataclass
class _SkipThenAskAgain(AbstractCapability[Any]):
    """Answers the first request itself (`SkipModelRequest`), and asks again once after the first response."""

    skip: bool
    asked: list[str] = dataclasses.field(default_factory=list[str])

    async def before_model_request(self, ctx: RunContext[Any], request_context: ModelRequestContext) -> Any:
        if self.skip and ctx.run_step == 1:
            raise SkipModelRequest(ModelResponse(parts=[TextPart('canned')]))
        return request_context

    async def after_model_request(
        self, ctx: RunContext[Any], *, request_context: ModelRequestContext, response: ModelResponse
    ) -> ModelResponse:
        self.asked.append(response.text or '')
        if ctx.run_step == 1:
            raise ModelRetry('say it differently')
        return response


@pytest.mark.parametrize('skip', [True, False], ids=['skipped', 'streamed'])
async def test_a_hook_asks_again_after_a_response_no_attempt_made(skip: bool) -> None:
    hook = _SkipThenAskAgain(skip)
    agent = Agent(TestModel(custom_output_text='fresh'), capabilities=[hook])
    async with agent.run_stream('hi') as result:
        output = await result.get_output()
    assert output == 'fresh'
    assert hook.asked == ['canned' if skip else 'fresh', 'fresh']
    retries = [p for m in result.all_messages() for p in m.parts if isinstance(p, RetryPromptPart)]
    assert [p.content for p in retries] == ['say it differently']
