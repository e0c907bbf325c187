"""Tool search: tools marked `defer_loading=True` are hidden from the model until its `search_tools` call finds
them (the `ToolSearch` capability, and the same default search in every run)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pytest

from edgewise.agent import Agent, RunContext, Tool, UnexpectedModelBehavior, UserError
from edgewise.agent.capabilities import AbstractCapability, CombinedCapability, ProcessHistory, ToolSearch
from edgewise.agent.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    NativeToolCallPart,
    NativeToolReturnPart,
    RetryPromptPart,
    TextPart,
    ToolAvailabilityDeltaPart,
    ToolCallPart,
    ToolReturnPart,
    ToolSearchCallPart,
    ToolSearchReturnPart,
    UserPromptPart,
)
from edgewise.agent.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel
from edgewise.agent.models.test import TestModel
from edgewise.agent.tools import ToolDefinition
from edgewise.agent.toolsets import AbstractToolset, FunctionToolset

pytestmark = pytest.mark.anyio

NO_MATCHES = {
    'discovered_tools': [],
    'message': 'No matching tools found. The tools you need may not be available.',
}


def get_weather(city: str) -> str:
    """Get the current weather for a city."""
    return f'sunny in {city}'


def get_forecast(city: str, days: int) -> str:
    """Get the weather forecast for a city."""
    return f'{days} sunny days in {city}'


def convert_currency(amount: float, currency: str) -> str:
    """Convert an amount of money to another currency."""
    return f'{amount} {currency}'


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def deferred_tools() -> list[Tool[Any]]:
    return [
        Tool(add),
        Tool(get_weather, defer_loading=True),
        Tool(get_forecast, defer_loading=True),
        Tool(convert_currency, defer_loading=True),
    ]


@dataclass
class Script:
    """A FunctionModel function answering with the given responses in turn and recording each request."""

    responses: list[list[Any]]
    tools: list[list[str]] = field(default_factory=list[list[str]])
    definitions: list[dict[str, ToolDefinition]] = field(default_factory=list[dict[str, ToolDefinition]])

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.tools.append([t.name for t in info.function_tools])
        self.definitions.append({t.name: t for t in info.function_tools})
        return ModelResponse(parts=self.responses[len(self.tools) - 1])


def search(*queries: str) -> ToolCallPart:
    return ToolCallPart('search_tools', {'queries': list(queries)}, tool_call_id='search')


def returns(messages: Sequence[ModelMessage]) -> list[Any]:
    """The parts of the requests after the first: what tools returned, or the retry prompts."""
    return [part for m in messages[1:] if isinstance(m, ModelRequest) for part in m.parts]


async def test_deferred_tools_are_shown_only_after_a_search_finds_them() -> None:
    script = Script(
        [
            [search('weather')],
            [ToolCallPart('get_weather', {'city': 'Paris'}, tool_call_id='w')],
            [TextPart('It is sunny.')],
        ]
    )
    result = await Agent(FunctionModel(script), tools=deferred_tools()).run('Weather in Paris?')

    assert script.tools == [
        ['add', 'search_tools'],
        ['add', 'get_weather', 'get_forecast', 'search_tools'],
        ['add', 'get_weather', 'get_forecast', 'search_tools'],
    ]
    search_return, weather_return = returns(result.all_messages())
    assert isinstance(search_return, ToolSearchReturnPart)  # typed, as pydantic-ai 2.x records it
    assert search_return.discovered_tools == [{'name': 'get_weather'}, {'name': 'get_forecast'}]
    assert search_return.tool_name == 'search_tools'
    assert search_return.tool_kind == 'tool-search'
    assert search_return.content == {
        'discovered_tools': [
            {'name': 'get_weather'},
            {'name': 'get_forecast'},
        ]
    }
    assert isinstance(weather_return, ToolReturnPart)
    assert weather_return.content == 'sunny in Paris'
    assert result.output == 'It is sunny.'


async def test_the_model_sees_the_search_tool_as_pydantic_ai_describes_it() -> None:
    script = Script([[TextPart('ok')]])
    await Agent(FunctionModel(script), tools=deferred_tools()).run('go')

    assert ToolSearch.function_tool_name == 'search_tools'
    definition = script.definitions[0][ToolSearch.function_tool_name]
    assert definition.description == (
        'There are additional tools not yet visible to you. When you need a capability not provided by your '
        'current tools, search here by providing one or more queries to discover and activate relevant tools. '
        'Each query is tokenized into words; tool names and descriptions are scored by token overlap. '
        'If no tools are found, they do not exist — do not retry.'
    )
    assert definition.parameters_json_schema == {
        'additionalProperties': False,
        'properties': {
            'queries': {
                'description': 'List of search queries to match against tool names and descriptions. Use specific '
                'words likely to appear in tool names or descriptions to narrow down relevant tools. Each query is '
                'independently tokenized; matches across queries are unioned.',
                'items': {'type': 'string'},
                'type': 'array',
            }
        },
        'required': ['queries'],
        'type': 'object',
    }
    assert (definition.tool_kind, definition.unless_native) == ('tool-search', 'tool_search')


async def test_a_found_tool_is_marked_as_part_of_the_search_corpus() -> None:
    script = Script([[search('currency')], [TextPart('ok')]])
    await Agent(FunctionModel(script), tools=deferred_tools()).run('go')

    found = script.definitions[1]['convert_currency']
    assert (found.defer_loading, found.with_native) == (False, 'tool_search')
    assert script.definitions[1]['add'].with_native is None


async def test_matches_come_best_first_and_at_most_max_results() -> None:
    script = Script([[search('weather forecast', 'city')], [TextPart('ok')]])
    agent = Agent(FunctionModel(script), tools=deferred_tools(), capabilities=[ToolSearch(max_results=1)])
    result = await agent.run('go')

    [search_return] = returns(result.all_messages())
    assert search_return.content == {'discovered_tools': [{'name': 'get_forecast'}]}
    assert script.tools[1] == ['add', 'get_forecast', 'search_tools']


async def test_a_search_matching_nothing_says_so_and_shows_no_tool() -> None:
    script = Script([[search('spreadsheet')], [TextPart('ok')]])
    result = await Agent(FunctionModel(script), tools=deferred_tools()).run('go')

    [search_return] = returns(result.all_messages())
    assert search_return.content == NO_MATCHES
    assert script.tools == [['add', 'search_tools'], ['add', 'search_tools']]


async def test_words_match_whole_not_inside_other_words() -> None:
    # `at` is inside `weather` and `amount` but is no word of theirs
    script = Script([[search('at')], [TextPart('ok')]])
    result = await Agent(FunctionModel(script), tools=deferred_tools()).run('go')

    assert returns(result.all_messages())[0].content == NO_MATCHES


async def test_an_empty_query_is_sent_back_to_the_model() -> None:
    script = Script([[search(' ', '')], [search('weather')], [search('?!')], [TextPart('ok')]])
    result = await Agent(FunctionModel(script), tools=deferred_tools()).run('go')

    first, _, third = returns(result.all_messages())
    assert isinstance(first, RetryPromptPart)
    assert isinstance(third, RetryPromptPart)
    assert first.content == third.content == 'Please provide at least one non-empty search query.'
    assert first.tool_name == 'search_tools'


async def test_the_search_tool_may_fail_once_in_a_row() -> None:
    script = Script([[search('')], [search('')]])
    with pytest.raises(UnexpectedModelBehavior, match="Tool 'search_tools' exceeded max retries count of 1"):
        await Agent(FunctionModel(script), tools=deferred_tools(), retries=5).run('go')


async def test_a_tool_called_before_it_is_found_is_refused_and_stays_hidden() -> None:
    # as in pydantic-ai 2.x: guessing a hidden tool's name neither runs it nor reveals it
    script = Script([[ToolCallPart('get_weather', {'city': 'Oslo'})], [TextPart('ok')]])
    result = await Agent(FunctionModel(script), tools=deferred_tools()).run('go')

    assert [(type(p), p.tool_name, p.content) for p in returns(result.all_messages())] == [
        (
            RetryPromptPart,
            'get_weather',
            "Tool 'get_weather' is not available yet: search for it first, then call it again once you've seen its "
            'schema.',
        )
    ]
    assert script.tools[1] == ['add', 'search_tools']


async def test_calling_a_hidden_tool_again_past_its_retries_ends_the_run() -> None:
    call = [ToolCallPart('get_weather', {'city': 'Oslo'})]
    script = Script([call, call, [TextPart('never')]])
    with pytest.raises(UnexpectedModelBehavior, match="Tool 'get_weather' exceeded max retries count of 1"):
        await Agent(FunctionModel(script), tools=deferred_tools()).run('go')


async def test_a_tool_found_then_called_runs() -> None:
    script = Script([[search('weather')], [ToolCallPart('get_weather', {'city': 'Oslo'})], [TextPart('ok')]])
    result = await Agent(FunctionModel(script), tools=deferred_tools()).run('go')

    found = [p.content for p in returns(result.all_messages()) if p.tool_name == 'get_weather']
    assert found == ['sunny in Oslo']


async def test_the_search_call_is_tagged_as_a_tool_search() -> None:
    script = Script([[search('weather'), ToolCallPart('add', {'a': 1, 'b': 2})], [TextPart('ok')]])
    result = await Agent(FunctionModel(script), tools=deferred_tools()).run('go')

    response = result.all_messages()[1]
    assert isinstance(response, ModelResponse)
    assert [(p.tool_name, p.tool_kind) for p in response.tool_calls] == [('search_tools', 'tool-search'), ('add', None)]


async def test_without_deferred_tools_nothing_is_added() -> None:
    plain = [Tool(add), Tool(get_weather)]
    for capabilities in ([], [ToolSearch[None]()]):
        script = Script([[ToolCallPart('add', {'a': 1, 'b': 2})], [TextPart('ok')]])
        result = await Agent(FunctionModel(script), tools=plain, capabilities=capabilities).run('go')
        assert script.tools == [['add', 'get_weather'], ['add', 'get_weather']]
        assert [p.tool_kind for p in returns(result.all_messages())] == [None]


async def test_a_search_function_picks_among_the_tools_not_found_yet() -> None:
    seen: list[tuple[list[str], list[str]]] = []

    async def pick(ctx: RunContext[None], queries: Sequence[str], tools: Sequence[ToolDefinition]) -> list[str]:
        seen.append((list(queries), [t.name for t in tools]))
        return ['no_such_tool', *(t.name for t in tools if queries[0] in t.name)]

    script = Script([[search('currency')], [search('get')], [TextPart('ok')]])
    agent = Agent(FunctionModel(script), tools=deferred_tools(), capabilities=[ToolSearch(strategy=pick)])
    result = await agent.run('go')

    assert seen == [
        (['currency'], ['get_weather', 'get_forecast', 'convert_currency']),
        (['get'], ['get_weather', 'get_forecast']),
    ]
    first, second = returns(result.all_messages())
    assert [m['name'] for m in first.content['discovered_tools']] == ['convert_currency']
    assert [m['name'] for m in second.content['discovered_tools']] == ['get_weather', 'get_forecast']
    # a search of the user's runs here even where a provider has its own search
    assert script.definitions[0]['search_tools'].unless_native is None


async def test_a_search_function_returning_no_known_tool_finds_nothing() -> None:
    def pick(ctx: RunContext[None], queries: Sequence[str], tools: Sequence[ToolDefinition]) -> list[str]:
        return ['add', 'unknown']  # `add` is not deferred: not among the tools a search can find

    script = Script([[search('x')], [TextPart('ok')]])
    agent = Agent(FunctionModel(script), tools=deferred_tools(), capabilities=[ToolSearch(strategy=pick)])
    result = await agent.run('go')

    assert returns(result.all_messages())[0].content == NO_MATCHES


async def test_the_keywords_strategy_is_the_keyword_search() -> None:
    script = Script([[search('convert money')], [TextPart('ok')]])
    agent = Agent(FunctionModel(script), tools=deferred_tools(), capabilities=[ToolSearch(strategy='keywords')])
    result = await agent.run('go')

    assert returns(result.all_messages())[0].content == {'discovered_tools': [{'name': 'convert_currency'}]}


async def test_descriptions_of_the_search_tool_can_be_replaced() -> None:
    script = Script([[TextPart('ok')]])
    capability = ToolSearch[None](tool_description='Find more tools.', parameter_description='Words to look for.')
    await Agent(FunctionModel(script), tools=deferred_tools(), capabilities=[capability]).run('go')

    definition = script.definitions[0]['search_tools']
    assert definition.description == 'Find more tools.'
    assert definition.parameters_json_schema['properties']['queries']['description'] == 'Words to look for.'


@pytest.mark.parametrize('strategy', ['bm25', 'regex'])
async def test_a_provider_only_strategy_is_a_user_error_with_a_model_that_cannot_run_it(strategy: Any) -> None:
    model = FunctionModel(Script([[TextPart('ok')]]), profile={'supported_native_tools': frozenset()})
    agent = Agent(model, tools=deferred_tools())
    with pytest.raises(UserError, match=r"Native tool\(s\) \['ToolSearchTool'\] not supported by this model"):
        await agent.run('go', capabilities=[ToolSearch(strategy=strategy)])


@pytest.mark.parametrize('strategy', ['bm25', 'regex'])
async def test_a_provider_only_strategy_offers_no_search_tools(strategy: Any) -> None:
    seen: list[AgentInfo] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(info)
        return ModelResponse(parts=[TextPart('ok')])

    model = FunctionModel(answer, profile={'tool_deferral_mode': 'standalone'})
    await Agent(model, tools=deferred_tools()).run('go', capabilities=[ToolSearch(strategy=strategy)])

    params = seen[0].model_request_parameters
    assert [(t.kind, t.strategy, t.optional) for t in params.native_tools] == [('tool_search', strategy, False)]  # type: ignore[attr-defined]
    assert [(t.name, t.defer_loading) for t in params.function_tools] == [
        ('add', False),
        ('get_weather', True),
        ('get_forecast', True),
        ('convert_currency', True),
    ]


async def test_a_tool_the_providers_search_found_in_the_same_response_runs() -> None:
    # the search's return comes in the very response that calls the tool: that reveals it
    found = {'discovered_tools': [{'name': 'get_weather'}]}
    script = Script(
        [
            [
                NativeToolCallPart('tool_search', {'queries': ['weather']}, tool_call_id='ts', tool_kind='tool-search'),
                NativeToolReturnPart('tool_search', found, tool_call_id='ts', tool_kind='tool-search'),
                ToolCallPart('get_weather', {'city': 'Oslo'}),
            ],
            [TextPart('ok')],
        ]
    )
    model = FunctionModel(script, profile={'tool_deferral_mode': 'standalone'})
    result = await Agent(model, tools=deferred_tools()).run('go', capabilities=[ToolSearch(strategy='bm25')])

    assert [(p.tool_name, p.content) for p in returns(result.all_messages())] == [('get_weather', 'sunny in Oslo')]


async def test_a_tool_named_search_tools_is_a_user_error_when_tools_are_deferred() -> None:
    def search_tools(query: str) -> str:
        return query

    agent = Agent(FunctionModel(Script([[TextPart('ok')]])), tools=[search_tools, Tool(add, defer_loading=True)])
    with pytest.raises(UserError, match="Tool name 'search_tools' is reserved for tool search"):
        await agent.run('go')


async def test_found_tools_stay_shown_in_a_conversation_continued_from_stored_messages() -> None:
    agent = Agent(FunctionModel(Script([[search('weather')], [TextPart('ok')]])), tools=deferred_tools())
    first = await agent.run('go')
    stored = ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json(first.all_messages()))

    script = Script([[TextPart('still ok')]])
    await agent.run('again', message_history=stored, model=FunctionModel(script))
    assert script.tools == [['add', 'get_weather', 'get_forecast', 'search_tools']]


async def test_a_toolset_marked_with_defer_loading_is_searched() -> None:
    toolset = FunctionToolset[None]([get_weather, add]).defer_loading(['get_weather'])
    script = Script([[search('weather')], [TextPart('ok')]])
    await Agent(FunctionModel(script), toolsets=[toolset]).run('go')

    assert script.tools == [['add', 'search_tools'], ['add', 'get_weather', 'search_tools']]


async def test_test_model_calls_the_search_tool_and_then_sees_what_it_found() -> None:
    model = TestModel()
    result = await Agent(model, tools=[Tool(get_weather, defer_loading=True), Tool(add)]).run('go')

    # TestModel's query for a list of strings is `['a']`: the word `a` is in get_weather's description
    assert result.output == ('{"add":0,"search_tools":{"discovered_tools":[{"name":"get_weather"}]}}')
    assert model.last_model_request_parameters is not None
    assert [t.name for t in model.last_model_request_parameters.function_tools] == [
        'add',
        'get_weather',
        'search_tools',
    ]


async def test_streamed_runs_search_too() -> None:
    seen: list[list[str]] = []
    responses: list[list[str | DeltaToolCalls]] = [
        [{0: DeltaToolCall('search_tools', '{"queries": ["weather"]}', tool_call_id='s')}],
        ['ok'],
    ]

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        seen.append([t.name for t in info.function_tools])
        for item in responses[len(seen) - 1]:
            yield item

    agent = Agent(FunctionModel(stream_function=stream), tools=deferred_tools())
    async with agent.run_stream('go') as run:
        assert await run.get_output() == 'ok'

    assert seen == [['add', 'search_tools'], ['add', 'get_weather', 'get_forecast', 'search_tools']]


async def test_a_tool_search_inside_combined_capabilities_replaces_the_default_one() -> None:
    script = Script([[search('weather')], [TextPart('ok')]])
    capability = CombinedCapability[None]([ToolSearch(max_results=1)])
    result = await Agent(FunctionModel(script), tools=deferred_tools(), capabilities=[capability]).run('go')

    assert [m['name'] for m in returns(result.all_messages())[0].content['discovered_tools']] == ['get_weather']


async def test_a_capability_can_wrap_the_run_toolset() -> None:
    @dataclass
    class Shout(AbstractCapability[None]):
        def get_wrapper_toolset(self, toolset: AbstractToolset[None]) -> AbstractToolset[None]:
            return toolset.renamed({'ADD': 'add'})

    script = Script([[ToolCallPart('ADD', {'a': 1, 'b': 2})], [TextPart('ok')]])
    agent = Agent(FunctionModel(script), tools=[add], capabilities=[AbstractCapability[None](), Shout()])
    result = await agent.run('go')

    assert script.tools == [['ADD'], ['ADD']]
    assert returns(result.all_messages())[0].content == 3


def history(part: Any) -> list[ModelMessage]:
    return [ModelRequest.user_text_prompt('go'), ModelResponse(parts=[search('weather')]), ModelRequest(parts=[part])]


@pytest.mark.parametrize(
    ('part', 'shown'),
    [
        # pydantic-ai versions before the typed return content kept the names in the metadata
        (ToolReturnPart('search_tools', 'found', 'search', metadata={'discovered_tools': ['get_weather']}), True),
        (ToolReturnPart('search_tools', 'found', 'search', metadata={'discovered_tools': [1]}), False),
        (ToolReturnPart('search_tools', 'found', 'search', metadata='get_weather'), False),
        (ToolReturnPart('search_tools', ['get_weather'], 'search', tool_kind='tool-search'), False),
        (ToolReturnPart('search_tools', {'discovered_tools': [{}]}, 'search', tool_kind='tool-search'), False),
    ],
)
async def test_what_older_or_odd_histories_found(part: ToolReturnPart, shown: bool) -> None:
    script = Script([[TextPart('ok')]])
    await Agent(FunctionModel(script), tools=deferred_tools()).run(message_history=history(part))

    assert ('get_weather' in script.tools[0]) is shown


async def test_a_provider_run_search_in_the_history_counts_too() -> None:
    found = NativeToolReturnPart(
        'tool_search', {'discovered_tools': [{'name': 'get_forecast', 'description': None}]}, tool_kind='tool-search'
    )
    messages: list[ModelMessage] = [
        ModelRequest.user_text_prompt('go'),
        ModelResponse(parts=[found, TextPart('searched')]),
    ]
    script = Script([[TextPart('ok')]])
    await Agent(FunctionModel(script), tools=deferred_tools()).run('again', message_history=messages)

    assert script.tools == [['add', 'get_forecast', 'search_tools']]


def test_stored_search_parts_load_as_their_typed_parts() -> None:
    from edgewise.agent.messages import ModelMessagesTypeAdapter, ToolSearchCallPart

    call = ToolSearchCallPart(args={'queries': ['weather']}, tool_call_id='s1')
    found = ToolSearchReturnPart(content={'discovered_tools': [{'name': 'get_weather'}]}, tool_call_id='s1')
    messages: list[ModelMessage] = [ModelResponse(parts=[call]), ModelRequest(parts=[found])]
    loaded = ModelMessagesTypeAdapter.validate_json(ModelMessagesTypeAdapter.dump_json(messages))

    assert loaded == messages
    loaded_call, loaded_found = loaded[0].parts[0], loaded[1].parts[0]
    assert isinstance(loaded_call, ToolSearchCallPart)
    assert loaded_call.queries == ['weather']
    assert isinstance(loaded_found, ToolSearchReturnPart)
    assert loaded_found.discovered_tools == [{'name': 'get_weather'}]
    assert loaded_found.message is None
    empty = ToolSearchReturnPart(content={'discovered_tools': [], 'message': 'none'})
    assert empty.message == 'none'


def test_search_parts_of_another_shape_stay_plain_parts() -> None:
    from edgewise.agent.messages import ToolCallPart as Call
    from edgewise.agent.messages import ToolSearchCallPart

    odd_return = ToolReturnPart('search_tools', ['get_weather'], 's1', tool_kind='tool-search')
    assert type(ToolReturnPart.narrow_type(odd_return)) is ToolReturnPart
    odd_call = Call('search_tools', {'queries': 'weather'}, 's1', tool_kind='tool-search')
    assert type(Call.narrow_type(odd_call)) is Call
    streaming = Call.narrow_type(Call('search_tools', '{"queries": ["wea', 's1', tool_kind='tool-search'))
    assert isinstance(streaming, ToolSearchCallPart)
    assert streaming.typed_args is None  # the JSON is not complete yet
    assert streaming.queries == []
    assert ToolSearchCallPart(tool_call_id='s2').typed_args is None
    assert ToolSearchCallPart(args='{"queries": ["a"]}').queries == ['a']


# -- what the history as the request hooks leave it reveals ---------------------------------------------------------


def without_deltas(messages: list[ModelMessage]) -> list[ModelMessage]:
    return [
        replace(m, parts=[p for p in m.parts if not isinstance(p, ToolAvailabilityDeltaPart)])
        if isinstance(m, ModelRequest)
        else m
        for m in messages
    ]


def without_search_calls(messages: list[ModelMessage]) -> list[ModelMessage]:
    return [
        m
        for m in messages
        if not (isinstance(m, ModelResponse) and any(isinstance(p, ToolSearchCallPart) for p in m.parts))
    ]


REVEALED_BY_DELTA: list[ModelMessage] = [ModelRequest(parts=[ToolAvailabilityDeltaPart(tools_added=['get_weather'])])]
REVEALED_BY_SEARCH: list[ModelMessage] = [
    ModelRequest(parts=[UserPromptPart('find the weather tool')]),
    ModelResponse(parts=[ToolSearchCallPart(args={'queries': ['weather']}, tool_call_id='s-1')]),
    ModelRequest(
        parts=[ToolSearchReturnPart(content={'discovered_tools': [{'name': 'get_weather'}]}, tool_call_id='s-1')]
    ),
]


@dataclass
class Revealed:
    """A model answering text, keeping each request's tools and `revealed_tool_names`."""

    tools: list[list[str]] = field(default_factory=list[list[str]])
    revealed: list[set[str]] = field(default_factory=list[set[str]])

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.tools.append([t.name for t in info.function_tools])
        self.revealed.append(set(info.model_request_parameters.revealed_tool_names))
        return ModelResponse(parts=[TextPart('ok')])


@pytest.mark.parametrize(
    ('history', 'processor'),
    [(REVEALED_BY_DELTA, without_deltas), (REVEALED_BY_SEARCH, without_search_calls)],
    ids=['delta-dropped', 'search-call-dropped'],
)
async def test_a_reveal_the_processed_history_no_longer_holds_reveals_nothing(
    history: list[ModelMessage], processor: Any
) -> None:
    model = Revealed()
    agent = Agent(FunctionModel(model), tools=deferred_tools(), capabilities=[ProcessHistory(processor)])
    await agent.run('go on', message_history=history)

    assert model.revealed == [set()]
    assert 'get_weather' not in model.tools[0]


@pytest.mark.parametrize('history', [REVEALED_BY_DELTA, REVEALED_BY_SEARCH], ids=['delta', 'search'])
async def test_a_reveal_the_processed_history_keeps_still_shows_the_tool(history: list[ModelMessage]) -> None:
    model = Revealed()
    agent = Agent(FunctionModel(model), tools=deferred_tools(), capabilities=[ProcessHistory(lambda m: m)])
    await agent.run('go on', message_history=history)

    assert model.revealed == [{'get_weather'}]
    assert 'get_weather' in model.tools[0]
