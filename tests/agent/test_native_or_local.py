"""Provider-adaptive tools (`NativeOrLocalTool`, `WebSearch`, `WebFetch`, `ImageGeneration`, `XSearch`): the model is
sent the native tool when it can run it and the local tool in its place when it cannot, with pydantic-ai 1.107's
constructor arguments, errors and spec names."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import httpx
import pytest

from edgewise.agent import Agent, RunContext, Tool, UserError
from edgewise.agent.capabilities import (
    CAPABILITY_TYPES,
    ImageGeneration,
    NativeOrLocalTool,
    WebFetch,
    WebSearch,
    XSearch,
)
from edgewise.agent.common_tools.image_generation import ImageGenerationSubagentTool, image_generation_tool
from edgewise.agent.common_tools.x_search import XSearchSubagentTool, x_search_tool
from edgewise.agent.messages import (
    BinaryImage,
    FilePart,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from edgewise.agent.models.function import AgentInfo, DeltaToolCall, FunctionModel
from edgewise.agent.models.openai import OpenAIChatModel
from edgewise.agent.models.test import TestModel
from edgewise.agent.native_tools import (
    AbstractNativeTool,
    CodeExecutionTool,
    ImageGenerationTool,
    WebFetchTool,
    WebSearchTool,
    XSearchTool,
)
from edgewise.agent.profiles import ModelProfile
from edgewise.agent.providers.openai import OpenAIProvider
from edgewise.agent.toolsets import FunctionToolset, PreparedToolset

from .models._chat import completion

pytestmark = pytest.mark.anyio

NO_NATIVE = ModelProfile(supported_native_tools=frozenset())
PNG = BinaryImage(b'\x89PNG\r\n\x1a\n', media_type='image/png')


def search(query: str) -> str:
    """Search the web.

    Args:
        query: What to look for.
    """
    return f'results for {query}'


class Seen:
    """What a `FunctionModel` was sent: the function tools and native tools of each request."""

    def __init__(self) -> None:
        self.function_tools: list[list[str]] = []
        self.native_tools: list[list[AbstractNativeTool]] = []

    def model(self, profile: ModelProfile | None = None) -> FunctionModel:
        """A model that calls the first function tool with `{'query': 'otters'}` once, then answers with the
        tool's result (or 'no tool')."""

        def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            self.function_tools.append([t.name for t in info.function_tools])
            self.native_tools.append(list(info.model_request_parameters.native_tools))
            returns = [p for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]
            if returns:
                return ModelResponse(parts=[TextPart(f'tool said: {returns[-1].content}')])
            if info.function_tools:
                return ModelResponse(parts=[ToolCallPart(info.function_tools[0].name, {'query': 'otters'})])
            return ModelResponse(parts=[TextPart('no tool')])

        return FunctionModel(answer, profile=profile)


# -- choosing the native or the local tool ---------------------------------------------------------------------------


async def test_a_model_with_the_native_tool_is_sent_it_and_not_the_local_tool() -> None:
    seen = Seen()
    result = await Agent(seen.model(), capabilities=[WebSearch(local=search)]).run('find otters')
    assert result.output == 'no tool'
    assert seen.function_tools == [[]]
    assert seen.native_tools == [[WebSearchTool()]]


async def test_a_model_without_the_native_tool_is_sent_the_local_tool_which_runs() -> None:
    seen = Seen()
    result = await Agent(seen.model(NO_NATIVE), capabilities=[WebSearch(local=search)]).run('find otters')
    assert result.output == 'tool said: results for otters'
    assert seen.function_tools == [['search'], ['search']]
    assert seen.native_tools == [[], []]


async def test_the_local_tool_of_a_direct_pairing_stands_in_for_its_native_tool() -> None:
    def run_python(query: str) -> str:
        return f'ran {query}'

    capability = NativeOrLocalTool(native=CodeExecutionTool(), local=run_python)
    seen = Seen()
    web_search_only = ModelProfile(supported_native_tools=frozenset({WebSearchTool}))
    result = await Agent(seen.model(web_search_only), capabilities=[capability]).run('x')
    assert result.output == 'tool said: ran otters'
    assert seen.function_tools[0] == ['run_python']
    seen = Seen()
    await Agent(seen.model(), capabilities=[capability]).run('x')
    assert seen.function_tools == [[]]
    assert seen.native_tools == [[CodeExecutionTool()]]


async def test_a_model_without_the_native_tool_and_no_local_tool_refuses_the_request() -> None:
    agent = Agent(Seen().model(NO_NATIVE), capabilities=[WebSearch()])
    with pytest.raises(UserError) as exc_info:
        await agent.run('find otters')
    message = str(exc_info.value)
    assert message.startswith("Native tool(s) ['WebSearchTool'] not supported by this model. Supported: [].")
    assert 'NativeOrLocalTool(native=..., local=...)' in message


async def test_local_false_uses_the_native_tool_only() -> None:
    agent = Agent(Seen().model(NO_NATIVE), capabilities=[WebSearch(local=False)])
    with pytest.raises(UserError, match='not supported'):
        await agent.run('find otters')


async def test_native_false_always_uses_the_local_tool() -> None:
    capability = WebSearch(native=False, local=search)
    assert capability.get_native_tools() == []
    seen = Seen()
    result = await Agent(seen.model(), capabilities=[capability]).run('find otters')
    assert result.output == 'tool said: results for otters'
    assert seen.native_tools == [[], []]


async def test_settings_only_the_native_tool_honours_leave_the_local_tool_out() -> None:
    capability = WebSearch(allowed_domains=['example.com'], max_uses=2, local=search)
    assert capability.get_toolset() is None
    seen = Seen()
    await Agent(seen.model(), capabilities=[capability]).run('x')
    assert seen.native_tools == [[WebSearchTool(allowed_domains=['example.com'], max_uses=2)]]
    with pytest.raises(UserError, match=r"\['WebSearchTool'\] not supported"):
        await Agent(Seen().model(NO_NATIVE), capabilities=[capability]).run('x')


async def test_a_native_tool_built_per_request_is_paired_by_its_kind() -> None:
    async def per_request(ctx: RunContext[None]) -> WebSearchTool:
        return WebSearchTool(search_context_size='high')

    capability = WebSearch(native=per_request, local=search)
    seen = Seen()
    await Agent(seen.model(), capabilities=[capability]).run('x')
    assert seen.native_tools == [[WebSearchTool(search_context_size='high')]]
    assert seen.function_tools == [[]]
    seen = Seen()
    await Agent(seen.model(NO_NATIVE), capabilities=[capability]).run('x')
    assert seen.function_tools[0] == ['search']


def test_a_native_tool_function_cannot_be_paired_without_a_unique_id() -> None:
    capability = NativeOrLocalTool(native=lambda ctx: WebSearchTool(), local=search)
    with pytest.raises(UserError, match='cannot derive native unique_id'):
        capability.get_toolset()


async def test_a_local_toolset_keeps_all_its_tools_as_fallbacks() -> None:
    def fetch(query: str) -> str:
        return f'page {query}'

    toolset = FunctionToolset([search, fetch])
    capability = NativeOrLocalTool(native=WebSearchTool(), local=toolset)
    assert capability.local is toolset
    seen = Seen()
    await Agent(seen.model(NO_NATIVE), capabilities=[capability]).run('x')
    assert seen.function_tools[0] == ['search', 'fetch']
    seen = Seen()
    await Agent(seen.model(), capabilities=[capability]).run('x')
    assert seen.function_tools == [[]]


async def test_test_model_calls_the_local_tool_when_its_profile_lacks_the_native_tool() -> None:
    result = await Agent(TestModel(profile=NO_NATIVE), capabilities=[WebSearch(local=search)]).run('x')
    assert result.output == '{"search":"results for a"}'
    with pytest.raises(UserError, match='TestModel does not support built-in tools'):
        await Agent(TestModel(), capabilities=[WebSearch(local=search)]).run('x')


async def test_a_streamed_run_gets_the_same_choice() -> None:
    async def stream(messages: list[ModelMessage], info: AgentInfo) -> Any:
        if any(isinstance(p, ToolReturnPart) for m in messages for p in m.parts):
            yield 'done'
        else:
            yield {0: DeltaToolCall(name=info.function_tools[0].name, json_args='{"query": "otters"}')}

    agent = Agent(FunctionModel(stream_function=stream, profile=NO_NATIVE), capabilities=[WebSearch(local=search)])
    async with agent.run_stream('x') as result:
        assert await result.get_output() == 'done'
    returns = [p for m in result.all_messages() for p in m.parts if isinstance(p, ToolReturnPart)]
    assert [r.content for r in returns] == ['results for otters']


# -- over HTTP -------------------------------------------------------------------------------------------------------


def _chat_model(name: str, sent: list[dict[str, Any]], answers: list[dict[str, Any]]) -> OpenAIChatModel:
    def respond(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        return httpx.Response(200, json=answers[len(sent) - 1])

    client = httpx.AsyncClient(transport=httpx.MockTransport(respond))
    return OpenAIChatModel(name, provider=OpenAIProvider(api_key='sk-test', http_client=client))


async def test_an_openai_chat_model_without_web_search_is_sent_the_local_tool() -> None:
    sent: list[dict[str, Any]] = []
    call = {'id': 'call_1', 'type': 'function', 'function': {'name': 'search', 'arguments': '{"query": "otters"}'}}
    answers = [completion(None, tool_calls=[call], finish_reason='tool_calls'), completion('Otters swim.')]
    agent = Agent(_chat_model('gpt-4o', sent, answers), capabilities=[WebSearch(local=search)])
    assert (await agent.run('find otters')).output == 'Otters swim.'
    assert [t['function']['name'] for t in sent[0]['tools']] == ['search']
    assert 'web_search_options' not in sent[0]
    assert sent[1]['messages'][-1] == {'role': 'tool', 'tool_call_id': 'call_1', 'content': 'results for otters'}


async def test_an_openai_chat_search_model_is_sent_web_search_and_not_the_local_tool() -> None:
    sent: list[dict[str, Any]] = []
    agent = Agent(
        _chat_model('gpt-4o-search-preview', sent, [completion('Otters swim.')]),
        capabilities=[WebSearch(local=search, search_context_size='low')],
    )
    assert (await agent.run('find otters')).output == 'Otters swim.'
    assert sent[0]['web_search_options'] == {'search_context_size': 'low'}
    assert 'tools' not in sent[0]


# -- construction ----------------------------------------------------------------------------------------------------


def test_the_native_tool_is_built_from_the_capabilitys_fields() -> None:
    assert WebSearch(local=False, search_context_size='high', blocked_domains=['x.com']).get_native_tools() == [
        WebSearchTool(search_context_size='high', blocked_domains=['x.com'])
    ]
    assert WebFetch(local=False, max_content_tokens=100, enable_citations=True).get_native_tools() == [
        WebFetchTool(max_content_tokens=100, enable_citations=True)
    ]
    assert ImageGeneration(quality='high', image_model='gpt-image-1', aspect_ratio='1:1').get_native_tools() == [
        ImageGenerationTool(quality='high', model='gpt-image-1', aspect_ratio='1:1')
    ]
    assert XSearch(allowed_x_handles=['pydantic']).get_native_tools() == [XSearchTool(allowed_x_handles=['pydantic'])]


def test_web_search_without_live_access_needs_the_native_tool() -> None:
    cached_only = WebSearch(local=search, external_web_access=False)
    assert cached_only.get_native_tools() == [WebSearchTool(external_web_access=False)]
    assert cached_only.get_toolset() is None
    live = WebSearch(local=search, external_web_access=True)
    assert live.get_native_tools() == [WebSearchTool(external_web_access=True)]
    assert live.get_toolset() is not None


def test_the_toolset_of_a_local_tool_is_named_by_the_capability_id() -> None:
    toolset = WebSearch(local=search, id='search').get_toolset()
    assert isinstance(toolset, PreparedToolset)
    assert isinstance(toolset.wrapped, FunctionToolset)
    assert toolset.wrapped.id == 'search'
    local_only = WebSearch(native=False, local=search, id='search').get_toolset()
    assert isinstance(local_only, FunctionToolset)
    assert local_only.id == 'search'


def test_a_function_given_as_local_becomes_a_tool_and_a_tool_is_kept() -> None:
    assert isinstance(WebSearch(local=search).local, Tool)
    tool = Tool(search, name='lookup')
    assert WebSearch(local=tool).local is tool


@pytest.mark.parametrize(
    ('make', 'message'),
    [
        (lambda: WebSearch(native=False, local=False), 'WebSearch: both `native` and `local` cannot be False'),
        (lambda: NativeOrLocalTool(local=search), 'NativeOrLocalTool: native=True requires a subclass'),
        (
            lambda: WebSearch(native=False, local=search, allowed_domains=['a.com']),
            'WebSearch: constraint fields require the native tool, but native=False',
        ),
        (lambda: WebFetch(native=False, local=search, max_uses=1), 'constraint fields require the native tool'),
        (
            lambda: WebSearch(native=False, local=search, external_web_access=False),
            'WebSearch: constraint fields require the native tool, but native=False',
        ),
        (lambda: WebSearch(native=False), 'WebSearch(native=False) requires an explicit local tool: pass `local=`'),
        (lambda: WebFetch(native=False), 'WebFetch(native=False) requires an explicit local tool'),
        (lambda: NativeOrLocalTool(native=WebSearchTool(), local='foo'), "`local='foo'` is not supported"),
        (lambda: WebSearch(local='bing'), "WebSearch(local='bing') is not a known strategy"),  # type: ignore[arg-type]
        (lambda: WebFetch(local='x'), "WebFetch(local='x') is not a known strategy"),  # type: ignore[arg-type]
        (lambda: ImageGeneration(local=True), '`local=True` is not supported'),  # type: ignore[arg-type]
        (
            lambda: ImageGeneration(fallback_model='test', local=search),
            'ImageGeneration: cannot specify both `fallback_model` and `local`',
        ),
        (lambda: XSearch(fallback_model='test', local=search), 'XSearch: cannot specify both `fallback_model`'),
        (
            lambda: ImageGeneration(fallback_model='openai-responses:gpt-image-1'),
            "'gpt-image-1' is a dedicated image generation model that cannot be used as `fallback_model` directly. "
            "Use a conversational model with image generation support instead, e.g. 'openai-responses:gpt-5.4'.",
        ),
        (
            lambda: ImageGeneration(fallback_model='google:imagen-3.0-generate-002'),
            "'imagen-3.0-generate-002' is a dedicated image generation model that cannot be used as `fallback_model` "
            'directly. Use a conversational model with image generation support instead, e.g. '
            "'google:gemini-3-pro-image'.",
        ),
    ],
)
def test_contradictory_or_unsupported_settings_are_refused(make: Any, message: str) -> None:
    with pytest.raises(UserError) as exc_info:
        make()
    assert message in str(exc_info.value)


def test_the_capability_id_and_description_are_kept() -> None:
    capability = WebFetch(local=search, id='fetcher', description='Reads pages')
    assert (capability.id, capability.description, capability.defer_loading) == ('fetcher', 'Reads pages', False)
    assert ImageGeneration(local=False, id='images').id == 'images'


# -- specs -----------------------------------------------------------------------------------------------------------


def test_agent_specs_name_the_capabilities() -> None:
    assert {'WebSearch', 'WebFetch', 'ImageGeneration', 'XSearch', 'Thinking'} <= CAPABILITY_TYPES.keys()
    assert 'NativeOrLocalTool' not in CAPABILITY_TYPES
    agent = Agent.from_spec(
        {
            'model': 'test',
            'capabilities': [
                {'WebSearch': {'allowed_domains': ['example.com'], 'local': False}},
                {'WebFetch': {'max_uses': 3}},
                {'ImageGeneration': {'local': False, 'size': '1K'}},
                {'XSearch': {'from_date': '2025-01-01T00:00:00'}},
            ],
        }
    )
    web_search, web_fetch, images, x_search = agent.root_capability.capabilities
    assert isinstance(web_search, WebSearch)
    assert web_search.allowed_domains == ['example.com']
    assert isinstance(web_fetch, WebFetch)
    assert web_fetch.get_native_tools() == [WebFetchTool(max_uses=3)]
    assert isinstance(images, ImageGeneration)
    assert (images.local, images.size) == (False, '1K')
    assert isinstance(x_search, XSearch)
    assert x_search.get_native_tools() == [XSearchTool(from_date=datetime(2025, 1, 1))]


def test_the_spec_schema_describes_their_arguments() -> None:
    from edgewise.agent.agent.spec import AgentSpec

    schema = json.dumps(AgentSpec.model_json_schema_with_capabilities())
    for name in ('spec_params_WebSearch', 'spec_params_WebFetch', 'spec_params_ImageGeneration', 'spec_XSearch'):
        assert name in schema
    assert '"allowed_domains"' in schema
    assert '"fallback_model"' in schema


# -- fallback models -------------------------------------------------------------------------------------------------


def _outer_model(tool_name: str, args: dict[str, Any]) -> FunctionModel:
    def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1].parts[-1]
        if isinstance(last, ToolReturnPart | RetryPromptPart):
            return ModelResponse(parts=[TextPart(f'{type(last).__name__}: {last.content!r}')])
        assert [t.name for t in info.function_tools] == [tool_name]
        return ModelResponse(parts=[ToolCallPart(tool_name, args)])

    return FunctionModel(answer, profile=NO_NATIVE)


async def test_image_generation_asks_the_fallback_model_with_the_image_tool() -> None:
    asked: list[tuple[list[ModelMessage], AgentInfo]] = []

    def painter(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        asked.append((messages, info))
        return ModelResponse(parts=[TextPart('Here:'), FilePart(PNG)])

    capability = ImageGeneration(fallback_model=FunctionModel(painter), quality='low')
    agent = Agent(_outer_model('generate_image', {'prompt': 'an otter'}), capabilities=[capability])
    result = await agent.run('draw')
    returns = [p for m in result.all_messages() for p in m.parts if isinstance(p, ToolReturnPart)]
    assert returns[0].tool_name == 'generate_image'
    assert returns[0].content == PNG
    [(messages, info)] = asked
    request = messages[0]
    assert isinstance(request, ModelRequest)
    assert request.parts[0].content == 'an otter'  # type: ignore[union-attr]
    assert request.instructions == 'Generate an image based on the user prompt. Do not ask clarifying questions.'
    params = info.model_request_parameters
    assert params.native_tools == [ImageGenerationTool(quality='low')]
    assert (params.output_mode, params.allow_image_output, params.allow_text_output) == ('image', True, False)


async def test_a_fallback_model_without_an_image_twice_makes_the_outer_model_retry() -> None:
    calls: list[int] = []

    def wordy(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        calls.append(len(messages))
        return ModelResponse(parts=[TextPart('No image, sorry.')])

    agent = Agent(
        _outer_model('generate_image', {'prompt': 'an otter'}),
        capabilities=[ImageGeneration(fallback_model=FunctionModel(wordy))],
    )
    result = await agent.run('draw')
    assert result.output == "RetryPromptPart: 'Exceeded maximum output retries (1)'"
    assert calls == [1, 3]  # asked again once, with its answer and a retry prompt


async def test_a_fallback_model_can_be_chosen_per_run() -> None:
    def searcher(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        [native] = info.model_request_parameters.native_tools
        assert native == XSearchTool(allowed_x_handles=['pydantic'], include_output=True)
        prompt = messages[0].parts[0]
        assert isinstance(prompt, UserPromptPart)
        return ModelResponse(parts=[TextPart(f'posts about {prompt.content}')])

    async def choose(ctx: RunContext[Any]) -> FunctionModel:
        return FunctionModel(searcher)

    capability = XSearch(fallback_model=choose, allowed_x_handles=['pydantic'], native=XSearchTool(include_output=True))
    assert capability.get_toolset() is not None  # the fallback model honours the handle filters
    agent = Agent(_outer_model('x_search', {'query': 'otters'}), capabilities=[capability])
    assert (await agent.run('x')).output == "ToolReturnPart: 'posts about otters'"


async def test_x_search_without_a_fallback_needs_an_xai_model() -> None:
    assert XSearch(allowed_x_handles=['a'], local=search).get_toolset() is None
    with pytest.raises(UserError, match=r"\['XSearchTool'\] not supported"):
        await Agent(Seen().model(NO_NATIVE), capabilities=[XSearch()]).run('x')


# -- the fallback-model tools on their own ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ('factory', 'subagent_class', 'native', 'tool_name'),
    [
        (image_generation_tool, ImageGenerationSubagentTool, ImageGenerationTool(), 'generate_image'),
        (x_search_tool, XSearchSubagentTool, XSearchTool(), 'x_search'),
    ],
)
def test_the_fallback_tool_factories_take_pydantic_ais_arguments(
    factory: Any, subagent_class: Any, native: AbstractNativeTool, tool_name: str
) -> None:
    assert factory('test', native).name == tool_name
    name = factory.__name__
    with pytest.warns(DeprecationWarning, match=rf'`{name}\(builtin_tool=\.\.\.\)` is deprecated'):
        assert factory('test', builtin_tool=native).name == tool_name
    with pytest.raises(TypeError, match=rf"^{name}\(\) missing 1 required positional argument: 'native_tool'$"):
        factory('test')
    with pytest.raises(TypeError, match=rf"^{name}\(\) got an unexpected keyword argument 'bogus'$"):
        factory('test', native, bogus=1, other=2)
    subagent = subagent_class(model='test', native_tool=native)
    with pytest.warns(DeprecationWarning, match=rf'`{subagent_class.__name__}\.builtin_tool` is deprecated'):
        assert subagent.builtin_tool is native
    with pytest.raises(AttributeError, match='no_such_field'):
        subagent.no_such_field  # noqa: B018


async def test_an_image_only_model_returned_per_run_is_refused_when_the_tool_runs() -> None:
    def returns_a_name(ctx: RunContext[Any]) -> Any:  # typed as returning a Model; pydantic-ai checks names too
        return 'openai-responses:dall-e-3'

    tool = image_generation_tool(returns_a_name, ImageGenerationTool())
    agent = Agent(_outer_model('generate_image', {'prompt': 'x'}), tools=[tool])
    with pytest.raises(UserError, match="'dall-e-3' is a dedicated image generation model"):
        await agent.run('draw')


# -- native tools made per call of the fallback tool -------------------------------------------------------------------


def _painter(seen: list[AbstractNativeTool]) -> FunctionModel:
    def paint(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.extend(info.model_request_parameters.native_tools)
        return ModelResponse(parts=[FilePart(PNG)])

    return FunctionModel(paint)


async def test_a_native_tool_function_of_the_capability_is_called_for_the_fallback_model_per_call() -> None:
    seen: list[AbstractNativeTool] = []
    contexts: list[tuple[str | None, str | None, int]] = []

    async def per_call(ctx: RunContext[str]) -> ImageGenerationTool:
        contexts.append((ctx.tool_name, ctx.deps, len(ctx.messages)))
        return ImageGenerationTool(quality='high', output_format='webp')

    # the capability's own setting goes over what the function returns
    capability = ImageGeneration(native=per_call, fallback_model=_painter(seen), output_format='png')
    agent = Agent(_outer_model('generate_image', {'prompt': 'an otter'}), deps_type=str, capabilities=[capability])
    result = await agent.run('draw', deps='the deps')
    assert result.output == f'ToolReturnPart: {PNG!r}'
    assert seen == [ImageGenerationTool(quality='high', output_format='png')]
    # asked on the native path for each request too (where the outer model, lacking the tool, drops it)
    assert contexts == [(None, 'the deps', 1), ('generate_image', 'the deps', 2), (None, 'the deps', 3)]


async def test_the_fallback_tool_factories_take_a_function_returning_the_native_tool() -> None:
    seen: list[AbstractNativeTool] = []

    def per_call(ctx: RunContext[Any]) -> ImageGenerationTool:
        return ImageGenerationTool(size='1024x1024')

    agent = Agent(
        _outer_model('generate_image', {'prompt': 'x'}), tools=[image_generation_tool(_painter(seen), per_call)]
    )
    await agent.run('draw')
    assert seen == [ImageGenerationTool(size='1024x1024')]

    def searcher(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.extend(info.model_request_parameters.native_tools)
        return ModelResponse(parts=[TextPart('posts')])

    async def handles(ctx: RunContext[Any]) -> XSearchTool:
        return XSearchTool(allowed_x_handles=['pydantic'])

    agent = Agent(_outer_model('x_search', {'query': 'x'}), tools=[x_search_tool(FunctionModel(searcher), handles)])
    assert (await agent.run('x')).output == "ToolReturnPart: 'posts'"
    assert seen[1:] == [XSearchTool(allowed_x_handles=['pydantic'])]


@pytest.mark.parametrize(
    ('returned', 'message'),
    [
        (None, r'The function giving the `ImageGenerationTool` for the fallback model returned `None`'),
        (XSearchTool(), r'The native tool for the fallback model must be a `ImageGenerationTool`, not XSearchTool\('),
    ],
)
async def test_a_native_tool_function_for_the_fallback_model_must_return_its_tool(returned: Any, message: str) -> None:
    seen: list[AbstractNativeTool] = []
    tool = image_generation_tool(_painter(seen), lambda ctx: returned)
    with pytest.raises(UserError, match=message):
        await Agent(_outer_model('generate_image', {'prompt': 'x'}), tools=[tool]).run('draw')
    # on the native path, a capability's function returning `None` leaves the tool out; its fallback cannot
    capability = ImageGeneration(native=lambda ctx: None, fallback_model=_painter(seen))
    with pytest.raises(UserError, match=r'returned `None`'):
        await Agent(_outer_model('generate_image', {'prompt': 'x'}), capabilities=[capability]).run('draw')
    assert seen == []


def test_a_native_tool_of_another_kind_is_refused_for_the_fallback_model() -> None:
    with pytest.raises(UserError, match=r'ImageGeneration: `native` must be .* a `ImageGenerationTool` or a function'):
        ImageGeneration(native=XSearchTool(), fallback_model='test')  # type: ignore[arg-type]
