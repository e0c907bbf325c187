"""The public names pydantic-ai 2.68 added to the modules Edgewise mirrors, imported from their `edgewise.agent`
module and used as a user would use them."""

from __future__ import annotations

import importlib.metadata
import json
import warnings
from collections.abc import AsyncIterable, AsyncIterator, Sequence
from dataclasses import replace
from datetime import timedelta
from functools import partial
from typing import Any, get_args

import anyio
import pytest
from logfire.testing import CaptureLogfire

from edgewise.agent import Agent, AgentModelSettings, RunContext, TextOutput, __version__
from edgewise.agent.exceptions import ModelAPIError, ModelHTTPError, UserError
from edgewise.agent.messages import (
    AgentStreamEvent,
    FunctionToolCallEvent,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    UserPromptPart,
)
from edgewise.agent.models._batch_codec import BatchJobError
from edgewise.agent.models.batch import Batch, BatchRequest, BatchResult, EncodedBatchRequest
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.test import TestModel

pytestmark = pytest.mark.anyio


def _echo_settings(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    return ModelResponse(parts=[TextPart(str((info.model_settings or {}).get('temperature')))])


def test_the_version_is_the_installed_distributions() -> None:
    assert __version__ == importlib.metadata.version('edgewise-agent')


async def test_agent_model_settings_as_a_function_of_the_run_context() -> None:
    def settings(ctx: RunContext[float]) -> dict[str, Any]:
        return {'temperature': ctx.deps}

    model_settings: AgentModelSettings[float] = settings  # type: ignore[assignment]
    agent = Agent(FunctionModel(_echo_settings), deps_type=float, model_settings=model_settings)
    assert (await agent.run('hi', deps=0.25)).output == '0.25'


def test_the_agent_module_names_the_run_nodes_and_helpers() -> None:
    import edgewise.agent as top
    import edgewise.agent.agent as agent_module
    from edgewise.agent.exceptions import PydanticAIDeprecationWarning
    from edgewise.agent.tool_manager import ParallelExecutionMode
    from edgewise.agent.tools import NativeToolFunc, ToolDenied, ToolsPrepareFunc

    for name in ('CallToolsNode', 'ModelRequestNode', 'UserPromptNode', 'capture_run_messages', 'ToolDenied'):
        assert getattr(agent_module, name) is getattr(top, name)
    assert agent_module.PydanticAIDeprecationWarning is PydanticAIDeprecationWarning
    assert (agent_module.ToolDenied, agent_module.ToolsPrepareFunc) == (ToolDenied, ToolsPrepareFunc)
    assert (agent_module.NativeToolFunc, agent_module.ParallelExecutionMode) == (NativeToolFunc, ParallelExecutionMode)
    assert get_args(agent_module.ParallelExecutionMode) == ('parallel', 'sequential', 'parallel_ordered_events')


async def test_the_nodes_of_the_agent_module_are_those_a_run_steps_through() -> None:
    from edgewise.agent.agent import CallToolsNode, ModelRequestNode, UserPromptNode

    async with Agent(TestModel()).iter('hi') as run:
        kinds = [type(node) async for node in run]
    assert kinds[:3] == [UserPromptNode, ModelRequestNode, CallToolsNode]


async def test_capture_run_messages_from_the_agent_module_keeps_a_failed_runs_messages() -> None:
    from edgewise.agent.agent import capture_run_messages

    def fail(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        raise RuntimeError('model down')

    with capture_run_messages() as messages, pytest.raises(RuntimeError, match='model down'):
        await Agent(FunctionModel(fail)).run('hello')
    request = messages[0]
    assert isinstance(request, ModelRequest)
    assert [part.content for part in request.parts if isinstance(part, UserPromptPart)] == ['hello']


async def test_a_tools_prepare_function_hides_tools_for_a_step() -> None:
    from edgewise.agent.agent import ToolsPrepareFunc
    from edgewise.agent.tools import ToolDefinition
    from edgewise.agent.toolsets import FunctionToolset

    def only_public(ctx: RunContext[None], tools: list[ToolDefinition]) -> list[ToolDefinition]:
        return [tool for tool in tools if not tool.name.startswith('secret')]

    prepare: ToolsPrepareFunc[None] = only_public
    toolset: FunctionToolset[None] = FunctionToolset()

    @toolset.tool_plain
    def public() -> str:
        return 'p'

    @toolset.tool_plain
    def secret_tool() -> str:
        return 's'

    seen: list[list[str]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append([tool.name for tool in info.function_tools])
        return ModelResponse(parts=[TextPart('done')])

    await Agent(FunctionModel(model), toolsets=[toolset.prepared(prepare)]).run('go')
    assert seen == [['public']]


async def test_a_native_tool_function_returning_none_leaves_the_tool_out() -> None:
    from edgewise.agent.agent import NativeToolFunc
    from edgewise.agent.capabilities import NativeTool
    from edgewise.agent.native_tools import AbstractNativeTool, WebSearchTool

    def search_when_asked(ctx: RunContext[bool]) -> AbstractNativeTool | None:
        return WebSearchTool() if ctx.deps else None

    native: NativeToolFunc[bool] = search_when_asked
    sent: list[list[AbstractNativeTool]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        sent.append(info.model_request_parameters.native_tools)
        return ModelResponse(parts=[TextPart('ok')])

    agent = Agent(FunctionModel(model), deps_type=bool, capabilities=[NativeTool(native)])
    await agent.run('go', deps=False)
    await agent.run('go', deps=True)
    assert sent == [[], [WebSearchTool()]]


async def test_an_event_stream_processor_changes_the_events_the_run_goes_on_with() -> None:
    from edgewise.agent.agent import EventStreamProcessor
    from edgewise.agent.capabilities import ProcessEventStream

    async def drop_tool_calls(
        ctx: RunContext[None], events: AsyncIterable[AgentStreamEvent]
    ) -> AsyncIterator[AgentStreamEvent]:
        async for event in events:
            if not isinstance(event, FunctionToolCallEvent):
                yield event

    processor: EventStreamProcessor[None] = drop_tool_calls
    agent = Agent(TestModel(), capabilities=[ProcessEventStream(processor)])

    @agent.tool_plain
    def one() -> int:
        return 1

    async with agent.run_stream_events('go') as stream:
        kinds = [type(event).__name__ async for event in stream]
    assert 'FunctionToolResultEvent' in kinds
    assert 'FunctionToolCallEvent' not in kinds


async def test_output_type_aliases_type_the_outputs_a_run_gives() -> None:
    from edgewise.agent.output import OutputTypeOrFunction, StructuredOutputMode, TextOutputFunc
    from edgewise.agent.profiles import ModelProfile

    assert get_args(StructuredOutputMode) == ('tool', 'native', 'prompted')
    mode: StructuredOutputMode = 'prompted'
    assert ModelProfile(default_structured_output_mode=mode)['default_structured_output_mode'] == 'prompted'

    def shout(ctx: RunContext[None], text: str) -> str:
        return text.upper()

    text_function: TextOutputFunc[str] = shout
    agent = Agent(FunctionModel(lambda messages, info: ModelResponse(parts=[TextPart('quiet')])))
    assert (await agent.run('hi', output_type=TextOutput(text_function))).output == 'QUIET'

    def length(text: str) -> int:
        return len(text)

    output: OutputTypeOrFunction[int] = length
    counting: Agent[None, int] = Agent(TestModel(custom_output_args={'text': 'four'}), output_type=output)
    assert (await counting.run('hi')).output == 4


async def test_an_output_validator_function_checks_the_output() -> None:
    from edgewise.agent.result import OutputDataT_inv, OutputValidatorFunc

    assert OutputDataT_inv.__name__ == 'OutputDataT_inv'

    async def strip(ctx: RunContext[None], output: str) -> str:
        return output.strip()

    validator: OutputValidatorFunc[None, str] = strip
    agent = Agent(FunctionModel(lambda messages, info: ModelResponse(parts=[TextPart('  padded  ')])))
    agent.output_validator(validator)
    assert (await agent.run('hi')).output == 'padded'


async def test_a_system_prompt_function_returning_none_adds_no_prompt() -> None:
    from edgewise.agent.tools import SystemPromptFunc

    def maybe(ctx: RunContext[bool]) -> str | None:
        return 'be brief' if ctx.deps else None

    prompt: SystemPromptFunc[bool] = maybe
    sent: list[list[str]] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        first = messages[0]
        assert isinstance(first, ModelRequest)
        sent.append([part.content for part in first.parts if isinstance(part, SystemPromptPart)])
        return ModelResponse(parts=[TextPart('ok')])

    agent = Agent(FunctionModel(model), deps_type=bool, system_prompt='always')
    agent.system_prompt(prompt)
    await agent.run('hi', deps=True)
    await agent.run('hi', deps=False)
    assert sent == [['always', 'be brief'], ['always']]


async def test_an_object_json_schema_describes_a_tools_parameters() -> None:
    from edgewise.agent.tools import ObjectJsonSchema, ToolDefinition

    schema: ObjectJsonSchema = {'type': 'object', 'properties': {'city': {'type': 'string'}}, 'required': ['city']}
    assert ToolDefinition(name='weather', parameters_json_schema=schema).parameters_json_schema is schema


async def test_a_dynamic_toolset_builds_the_toolset_of_each_run() -> None:
    from edgewise.agent.toolsets import DynamicToolset, FunctionToolset

    built: list[str] = []

    def for_user(ctx: RunContext[str]) -> FunctionToolset[str]:
        built.append(ctx.deps)
        toolset: FunctionToolset[str] = FunctionToolset()

        @toolset.tool_plain
        def greet() -> str:
            return f'hello {ctx.deps}'

        return toolset

    dynamic = DynamicToolset(for_user, per_run_step=False, id='users')
    assert (dynamic.id, dynamic.per_run_step) == ('users', False)
    result = await Agent(TestModel(), deps_type=str, toolsets=[dynamic]).run('go', deps='ada')
    assert result.output == '{"greet":"hello ada"}'
    assert built == ['ada']


def test_image_size_and_quality_are_what_the_image_tool_sends() -> None:
    from edgewise.agent.models._openai_native_tools import responses_native_tools
    from edgewise.agent.models._request_parameters import ModelRequestParameters
    from edgewise.agent.native_tools import ImageGenerationTool, ImageQuality, ImageSize

    assert get_args(ImageSize) == ('auto', '1024x1024', '1024x1536', '1536x1024', '512', '1K', '2K', '4K')
    assert get_args(ImageQuality) == ('low', 'medium', 'high', 'xhigh', 'max', 'auto')
    quality: ImageQuality = 'xhigh'
    size: ImageSize = '1024x1536'
    [mapped] = responses_native_tools(
        ModelRequestParameters(native_tools=[ImageGenerationTool(quality=quality, size=size)])
    )
    assert (mapped['type'], mapped['quality'], mapped['size']) == ('image_generation', 'xhigh', '1024x1536')


def test_an_mcp_server_tool_url_of_the_connector_scheme_names_an_openai_connector() -> None:
    from edgewise.agent.models._openai_native_tools import responses_native_tools
    from edgewise.agent.models._request_parameters import ModelRequestParameters
    from edgewise.agent.models.openai import MCP_SERVER_TOOL_CONNECTOR_URI_SCHEME
    from edgewise.agent.native_tools import MCPServerTool

    assert MCP_SERVER_TOOL_CONNECTOR_URI_SCHEME == 'x-openai-connector'
    tool = MCPServerTool(id='drive', url=f'{MCP_SERVER_TOOL_CONNECTOR_URI_SCHEME}:connector_googledrive')
    [mapped] = responses_native_tools(ModelRequestParameters(native_tools=[tool]))
    assert mapped['connector_id'] == 'connector_googledrive'
    assert 'server_url' not in mapped


def test_the_deprecated_openai_models() -> None:
    from edgewise.agent.models.openai import DEPRECATED_OPENAI_MODELS

    assert isinstance(DEPRECATED_OPENAI_MODELS, frozenset)
    assert {'chatgpt-4o-latest', 'gpt-4-32k', 'o1-preview', 'gpt-5.1-mini'} <= DEPRECATED_OPENAI_MODELS
    assert 'gpt-4o' not in DEPRECATED_OPENAI_MODELS
    assert len(DEPRECATED_OPENAI_MODELS) == 17


async def test_instrumented_embedding_and_image_models_from_their_packages(capfire: CaptureLogfire) -> None:
    from edgewise.agent.embeddings import InstrumentedEmbeddingModel, TestEmbeddingModel, instrument_embedding_model
    from edgewise.agent.images import (
        InstrumentedImageGenerationModel,
        TestImageGenerationModel,
        instrument_image_generation_model,
    )

    embedder = instrument_embedding_model(TestEmbeddingModel(dimensions=2), True)
    painter = instrument_image_generation_model(TestImageGenerationModel('painter'), True)
    assert isinstance(embedder, InstrumentedEmbeddingModel)
    assert isinstance(painter, InstrumentedImageGenerationModel)
    await embedder.embed(['one'], input_type='query')
    await painter.generate('a red square')
    names = [span['name'] for span in capfire.exporter.exported_spans_as_dict()]
    assert 'embeddings {model_name}' in names
    assert 'image_generation {model_name}' in names


class Batched(FunctionModel):
    """A function model answering each prompt with its text through the in-memory batch API: it records the size of
    each batch, fails answers as `script` says, keeps its batches in progress for `checks` status checks (forever
    with `checks=-1`), records the batches it is asked to cancel, and with
    `job_error` ends each job without results; with
    `gone`, each check of a batch fails with that status."""

    def __init__(
        self,
        *,
        script: Sequence[str] = (),
        checks: int = 0,
        down: bool = False,
        job_error: int | None = None,
        gone: int | None = None,
    ) -> None:
        self.script, self.checks, self.down, self.job_error, self.gone = list(script), checks, down, job_error, gone
        self.batches: list[int] = []
        self.checks_left: dict[str, int] = {}
        self.cancelled: list[str] = []
        self.checked = anyio.Event()

        def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            step = self.script.pop(0) if self.script else 'ok'
            if step in ('busy', 'bad'):
                raise ModelHTTPError(status_code=429 if step == 'busy' else 400, model_name='batched', body=step)
            if step == 'bug':
                raise ValueError('bug in the model function')
            request = messages[-1]
            assert isinstance(request, ModelRequest)
            return ModelResponse(parts=[TextPart(f'answer to {request.parts[-1].content}')])  # type: ignore[union-attr]

        super().__init__(answer, model_name='batched')

    async def batch_create(self, requests: Sequence[EncodedBatchRequest]) -> Batch:
        if self.down:
            raise ModelHTTPError(status_code=500, model_name='batched', body='batch API down')
        self.batches.append(len(requests))
        batch = await super().batch_create(requests)
        self.checks_left[batch.id] = self.checks
        return replace(batch, status='in_progress') if self.checks else batch

    async def batch_status(self, batch: Batch) -> Batch:
        self.checked.set()
        if self.gone is not None:  # the provider answers a check of the batch with this status
            raise ModelHTTPError(status_code=self.gone, model_name='batched', body='no such batch')
        self.checks_left[batch.id] -= 1
        return replace(batch, status='in_progress' if self.checks_left[batch.id] else 'ended')

    async def batch_results(self, batch: Batch) -> list[BatchResult]:
        if self.job_error is not None:  # the job ended without running its requests
            raise BatchJobError(status_code=self.job_error, model_name='batched', body='job failed')
        return await super().batch_results(batch)

    async def batch_cancel(self, batch: Batch) -> Batch:
        self.cancelled.append(batch.id)
        return await super().batch_cancel(batch)


def _requests(*prompts: str) -> list[BatchRequest]:
    return [BatchRequest(custom_id=prompt, messages=[ModelRequest.user_text_prompt(prompt)]) for prompt in prompts]


def _texts(outcomes: Sequence[ModelResponse | ModelAPIError]) -> list[str]:
    return [outcome.text or '' if isinstance(outcome, ModelResponse) else repr(outcome) for outcome in outcomes]


QUICK = timedelta(milliseconds=1)


async def test_model_request_batch_answers_each_request_in_order() -> None:
    from edgewise.agent.direct import model_request_batch

    model = Batched(checks=2)
    outcomes = await model_request_batch(
        model, _requests('a', 'b', 'c'), max_requests=2, poll_interval=QUICK, max_poll_interval=QUICK
    )
    assert _texts(outcomes) == ['answer to a', 'answer to b', 'answer to c']
    assert sorted(model.batches) == [1, 2]  # submitted together, in batches of at most `max_requests`
    assert set(model.checks_left.values()) == {0}  # each checked until it ended


async def test_model_request_batch_returns_a_requests_own_error_in_its_place() -> None:
    from edgewise.agent.direct import model_request_batch

    outcomes = await model_request_batch(Batched(script=['ok', 'bad']), _requests('a', 'b'))
    assert isinstance(outcomes[0], ModelResponse)
    assert isinstance(outcomes[1], ModelHTTPError)
    assert (outcomes[1].status_code, outcomes[1].body) == (400, 'bad')


async def test_model_request_batch_submits_transient_failures_again_until_resubmissions_are_spent() -> None:
    from edgewise.agent.direct import model_request_batch

    model = Batched(script=['busy', 'ok'])
    assert _texts(await model_request_batch(model, _requests('a'))) == ['answer to a']
    assert model.batches == [1, 1]
    [error] = await model_request_batch(Batched(script=['busy']), _requests('a'), max_resubmissions=0)
    assert isinstance(error, ModelHTTPError)
    assert error.status_code == 429


async def test_a_job_that_ended_without_results_is_the_error_of_each_of_its_requests() -> None:
    from edgewise.agent.direct import model_request_batch

    model = Batched(job_error=400)
    outcomes = await model_request_batch(model, _requests('a', 'b'))
    assert [(type(error).__name__, error.body) for error in outcomes if isinstance(error, ModelHTTPError)] == [
        ('BatchJobError', 'job failed'),
        ('BatchJobError', 'job failed'),
    ]
    model = Batched(job_error=503)  # a transient failure of the job: submitted again, then given up on
    assert all(isinstance(error, ModelHTTPError) for error in await model_request_batch(model, _requests('a')))
    assert model.batches == [1, 1, 1]


async def test_model_request_batch_raises_what_is_not_an_answer_of_the_provider() -> None:
    from edgewise.agent.direct import model_request_batch

    with pytest.raises(ModelHTTPError, match='batch API down'):
        await model_request_batch(Batched(down=True), _requests('a'))
    with pytest.raises(ValueError, match='bug in the model function'):
        await model_request_batch(Batched(script=['bug']), _requests('a'))


async def test_cancelling_model_request_batch_cancels_its_batches() -> None:
    from edgewise.agent.direct import model_request_batch

    model = Batched(checks=-1)
    async with anyio.create_task_group() as group:
        group.start_soon(partial(model_request_batch, model, _requests('a'), poll_interval=QUICK))
        await model.checked.wait()
        group.cancel_scope.cancel()
    assert model.batches == [1]
    assert len(model.cancelled) == 1


async def test_model_request_batch_refuses_what_a_batch_cannot_do() -> None:
    from edgewise.agent.direct import model_request_batch
    from edgewise.agent.models.openai import OpenAIChatModel
    from edgewise.agent.providers.openai import OpenAIProvider

    provider = OpenAIProvider(api_key='sk-x', base_url='http://127.0.0.1:9/v1')
    with pytest.raises(UserError, match=r"needs a model with a batch API; `OpenAIChatModel` \('gpt-4o'\) has none"):
        await model_request_batch(OpenAIChatModel('gpt-4o', provider=provider), _requests('a'))
    with pytest.raises(UserError, match='`custom_id` of its own'):
        await model_request_batch(TestModel(), _requests('a', 'a'))
    timed = BatchRequest(custom_id='t', messages=[], model_settings={'request_timeout': 5})
    with pytest.raises(UserError, match="Batch request 't' sets `request_timeout`"):
        await model_request_batch(TestModel(), [timed])
    with pytest.raises(UserError, match='`max_requests` must be at least 1'):
        await model_request_batch(TestModel(), _requests('a'), max_requests=0)
    with pytest.raises(UserError, match='`poll_interval` must be positive'):
        await model_request_batch(TestModel(), _requests('a'), poll_interval=timedelta(0))


async def test_a_batch_the_provider_no_longer_has_fails_the_run_with_suspended_response_expired() -> None:
    from edgewise.agent.capabilities import BatchModelRequests
    from edgewise.agent.exceptions import AgentRunError, SuspendedResponseExpired

    batching = BatchModelRequests(max_wait=None, max_requests=1, poll_interval=QUICK)
    agent = Agent(Batched(checks=1, gone=404), capabilities=[batching])
    with pytest.raises(SuspendedResponseExpired, match=r"Batch 'batch_\w+' of 'function' could not be read") as caught:
        await agent.run('a')
    assert isinstance(caught.value, AgentRunError)
    assert isinstance(caught.value.__cause__, ModelHTTPError)
    with pytest.raises(ModelHTTPError, match='status_code: 400'):  # another error of a check stays the provider's
        await Agent(Batched(checks=1, gone=400), capabilities=[batching]).run('a')


async def test_results_the_provider_no_longer_has_fail_the_run_with_suspended_response_expired() -> None:
    from edgewise.agent.capabilities import BatchModelRequests
    from edgewise.agent.exceptions import SuspendedResponseExpired

    agent = Agent(Batched(job_error=404), capabilities=[BatchModelRequests(max_wait=None, max_requests=1)])
    with pytest.raises(SuspendedResponseExpired, match='no longer has it or its results'):
        await agent.run('a')


async def test_model_request_batch_leaves_a_missing_batch_the_providers_error() -> None:
    from edgewise.agent.direct import model_request_batch

    with pytest.raises(ModelHTTPError, match='status_code: 404'):
        await model_request_batch(Batched(checks=1, gone=404), _requests('a'), poll_interval=QUICK)


async def test_changing_history_in_place_leaves_request_spans_true_and_warns_nothing(capfire: CaptureLogfire) -> None:
    from edgewise.agent import MessageHistoryMutatedWarning
    from edgewise.agent.exceptions import MessageHistoryMutatedWarning as FromExceptions

    assert MessageHistoryMutatedWarning is FromExceptions
    assert issubclass(MessageHistoryMutatedWarning, Warning)
    from edgewise.agent.capabilities import Instrumentation

    agent = Agent(TestModel(), capabilities=[Instrumentation()])

    @agent.tool
    def rewrite(ctx: RunContext[None]) -> str:
        first = ctx.messages[0]
        assert isinstance(first, ModelRequest)
        prompt = first.parts[-1]
        assert isinstance(prompt, UserPromptPart)
        prompt.content = 'rewritten'  # in place, which pydantic-ai 2.68 warns about
        return 'done'

    with warnings.catch_warnings():
        warnings.simplefilter('error')
        await agent.run('original')
    requests = [
        span['attributes']['gen_ai.input.messages']
        for span in capfire.exporter.exported_spans_as_dict()
        if 'gen_ai.input.messages' in span['attributes'] and span['name'].startswith('chat')
    ]
    assert len(requests) == 2
    assert ('original' in requests[0], 'rewritten' in requests[0]) == (True, False)
    assert ('original' in requests[1], 'rewritten' in requests[1]) == (False, True)  # what the second one sent


async def test_ui_requests_must_be_json_unless_the_route_allows_other_media_types() -> None:
    import httpx
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    from edgewise.agent.ui import DEFAULT_ALLOWED_CONTENT_TYPES
    from edgewise.agent.ui.vercel_ai import VercelAIAdapter

    assert frozenset({'application/json'}) == DEFAULT_ALLOWED_CONTENT_TYPES
    agent = Agent(TestModel(custom_output_text='hello'))

    async def strict(request: Request) -> Response:
        return await VercelAIAdapter.dispatch_request(request, agent=agent)

    async def open_route(request: Request) -> Response:
        return await VercelAIAdapter.dispatch_request(request, agent=agent, allowed_content_types=None)

    app = Starlette(routes=[Route('/chat', strict, methods=['POST']), Route('/open', open_route, methods=['POST'])])
    message = {'id': 'u', 'role': 'user', 'parts': [{'type': 'text', 'text': 'hi'}]}
    body = json.dumps({'trigger': 'submit-message', 'id': 'c', 'messages': [message]}).encode()
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url='http://test') as client:
        plain = await client.post('/chat', content=body, headers={'content-type': 'text/plain'})
        assert (plain.status_code, plain.text) == (
            415,
            'Expected `Content-Type: application/json`, got text/plain.',
        )
        bare = await client.post('/chat', content=body)
        assert bare.text == 'Expected `Content-Type: application/json`, got no content type.'
        json_type = {'content-type': 'Application/JSON; charset=utf-8'}
        assert (await client.post('/chat', content=body, headers=json_type)).status_code == 200
        allowed = await client.post('/open', content=body, headers={'content-type': 'text/plain'})
        assert allowed.status_code == 200
        assert '"type":"text-start"' in allowed.text


async def test_abstract_model_is_the_identity_every_model_shares() -> None:
    from edgewise.agent import AbstractModel
    from edgewise.agent.models import AbstractModel as FromModels
    from edgewise.agent.models import Model

    assert AbstractModel is FromModels
    assert issubclass(Model, AbstractModel)
    assert isinstance(TestModel(), AbstractModel)
    with pytest.raises(TypeError, match=r"abstract methods '?model_name'?, '?system"):
        AbstractModel()  # type: ignore[abstract]

    class Speaker(AbstractModel):
        @property
        def model_name(self) -> str:
            return 'voice-1'

        @property
        def system(self) -> str:
            return 'acme'

    speaker = Speaker()
    assert (speaker.model_id, speaker.label, speaker.base_url, speaker.context_window) == (
        'acme:voice-1',
        'acme:voice-1',
        None,
        None,
    )
    async with speaker as entered:
        assert entered is speaker
