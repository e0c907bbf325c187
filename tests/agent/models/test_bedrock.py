"""`BedrockConverseModel` against a local Bedrock: a real HTTP server on 127.0.0.1 that checks each request's SigV4
signature (recomputed by the test's own verifier) and answers Converse JSON or ConverseStream event-stream frames."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import pytest

from edgewise.agent import Agent
from edgewise.agent.exceptions import (
    ModelAPIError,
    ModelAuthenticationError,
    ModelContextWindowExceededError,
    ModelHTTPError,
    ModelNotFoundError,
    ModelRateLimitError,
    ModelServerError,
    UnexpectedModelBehavior,
)
from edgewise.agent.messages import (
    BinaryContent,
    ImageUrl,
    ModelRequest,
    ModelResponse,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    UserPromptPart,
)
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models.bedrock import BedrockConverseModel, BedrockModelSettings
from edgewise.agent.providers.bedrock import BedrockProvider
from edgewise.agent.usage import RequestUsage

from ._aws import (
    ACCESS_KEY,
    BEARER,
    SECRET_KEY,
    SESSION_TOKEN,
    Answer,
    FakeBedrock,
    bedrock_handler,
    event,
    exception,
    frame,
)
from .conftest import serve_http

pytestmark = pytest.mark.anyio

MODEL_ID = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0'


@pytest.fixture
def bedrock() -> Iterator[FakeBedrock]:
    server = FakeBedrock()
    with serve_http(bedrock_handler(server)) as port:
        server.url = f'http://127.0.0.1:{port}'
        yield server


def provider_for(server: FakeBedrock, **kwargs: Any) -> BedrockProvider:
    given: dict[str, Any] = {'aws_access_key_id': ACCESS_KEY, 'aws_secret_access_key': SECRET_KEY}
    if 'api_key' in kwargs:
        given = {}
    return BedrockProvider(**{**given, 'region_name': 'us-east-1', 'base_url': server.url, 'max_retries': 0, **kwargs})


def converse(*content: dict[str, Any], stop: str = 'end_turn', **usage: int) -> Answer:
    counts = {'inputTokens': 12, 'outputTokens': 5, 'totalTokens': 17, **usage}
    body = {'output': {'message': {'role': 'assistant', 'content': list(content)}}, 'stopReason': stop}
    return Answer(body={**body, 'usage': counts, 'metrics': {'latencyMs': 80}})


def user(text: str) -> list[Any]:
    return [ModelRequest(parts=[UserPromptPart(text)], instructions='Be brief.')]


PARAMS = ModelRequestParameters()


async def drain(model: BedrockConverseModel, messages: list[Any]) -> None:
    async with model.request_stream(messages, None, PARAMS) as stream:
        async for _ in stream:
            pass


async def test_a_signed_converse_request_gives_text_usage_and_finish_reason(bedrock: FakeBedrock) -> None:
    bedrock.script(converse({'text': 'Hello!'}, cacheReadInputTokens=4))
    async with provider_for(bedrock) as provider:
        model = BedrockConverseModel(MODEL_ID, provider=provider)
        response = await model.request(user('Hi'), {'max_tokens': 50, 'temperature': 0.5}, PARAMS)
    (received,) = bedrock.received
    assert received['auth'] == 'us-east-1/bedrock'
    assert received['path'] == '/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse'
    assert received['body'] == {
        'messages': [{'role': 'user', 'content': [{'text': 'Hi'}]}],
        'system': [{'text': 'Be brief.'}],
        'inferenceConfig': {'maxTokens': 50, 'temperature': 0.5},
    }
    assert response.parts == [TextPart('Hello!')]
    assert response.usage == RequestUsage(
        input_tokens=16, output_tokens=5, cache_read_tokens=4, details={'cacheReadInputTokens': 4}
    )
    assert (response.finish_reason, response.provider_details) == ('stop', {'finish_reason': 'end_turn'})
    assert (response.provider_name, response.model_name, response.provider_url) == ('bedrock', MODEL_ID, bedrock.url)


async def test_a_session_token_is_sent_and_signed(bedrock: FakeBedrock) -> None:
    bedrock.script(converse({'text': 'ok'}))
    async with provider_for(bedrock, aws_session_token=SESSION_TOKEN) as provider:
        await BedrockConverseModel(MODEL_ID, provider=provider).request(user('Hi'), None, PARAMS)
    (received,) = bedrock.received
    assert received['auth'] == 'us-east-1/bedrock'
    assert received['headers']['x-amz-security-token'] == SESSION_TOKEN
    assert 'x-amz-security-token' in received['headers']['authorization']


async def test_an_api_key_is_sent_as_a_bearer_token_without_signing(bedrock: FakeBedrock) -> None:
    bedrock.script(converse({'text': 'ok'}))
    async with BedrockProvider(api_key=BEARER, base_url=bedrock.url, max_retries=0) as provider:
        response = await BedrockConverseModel(MODEL_ID, provider=provider).request(user('Hi'), None, PARAMS)
    assert response.parts == [TextPart('ok')]
    (received,) = bedrock.received
    assert received['headers']['authorization'] == f'Bearer {BEARER}'
    assert 'x-amz-date' not in received['headers']


async def test_a_wrong_secret_is_refused_as_an_authentication_error_that_does_not_show_it(
    bedrock: FakeBedrock,
) -> None:
    wrong = 'not-the-secret-key-0123456789'
    async with provider_for(bedrock, aws_secret_access_key=wrong) as provider:
        model = BedrockConverseModel(MODEL_ID, provider=provider)
        with pytest.raises(ModelAuthenticationError) as caught:
            await model.request(user('Hi'), None, PARAMS)
    assert isinstance(caught.value, ModelHTTPError)
    assert (caught.value.status_code, caught.value.provider_error_code) == (403, 'InvalidSignatureException')
    assert wrong not in str(caught.value)
    assert wrong not in repr(caught.value)
    assert wrong not in repr(provider)
    assert wrong not in repr(model)


async def test_tools_go_out_as_tool_config_and_results_come_back_as_tool_result_blocks(bedrock: FakeBedrock) -> None:
    call = {'toolUse': {'toolUseId': 'tooluse_1', 'name': 'get_weather', 'input': {'city': 'Utrecht'}}}
    bedrock.script(
        converse({'text': 'Let me check.'}, call, stop='tool_use'),
        converse({'text': 'Sunny in Utrecht.'}),
    )
    async with provider_for(bedrock) as provider:
        agent = Agent(BedrockConverseModel(MODEL_ID, provider=provider), instructions='Answer.')

        @agent.tool_plain
        def get_weather(city: str) -> str:
            """The weather in a city."""
            return f'Sunny in {city}'

        result = await agent.run('Weather?')
    assert result.output == 'Sunny in Utrecht.'
    first, second = (r['body'] for r in bedrock.received)
    (tool,) = first['toolConfig']['tools']
    assert tool['toolSpec']['name'] == 'get_weather'
    assert tool['toolSpec']['description'] == 'The weather in a city.'
    assert tool['toolSpec']['inputSchema']['json']['properties'] == {'city': {'type': 'string'}}
    assert first['toolConfig']['toolChoice'] == {'auto': {}}
    assert second['messages'][1:] == [
        {'role': 'assistant', 'content': [{'text': 'Let me check.'}, call]},
        {
            'role': 'user',
            'content': [
                {
                    'toolResult': {
                        'toolUseId': 'tooluse_1',
                        'content': [{'text': 'Sunny in Utrecht'}],
                        'status': 'success',
                    }
                }
            ],
        },
    ]
    assert result.usage.input_tokens == 24


async def test_a_stream_of_event_frames_gives_text_a_tool_call_usage_and_finish_reason(bedrock: FakeBedrock) -> None:
    bedrock.script(
        Answer(
            frames=[
                event('messageStart', {'role': 'assistant'}),
                event('contentBlockDelta', {'contentBlockIndex': 0, 'delta': {'text': 'Checking'}}),
                event('contentBlockDelta', {'contentBlockIndex': 0, 'delta': {'text': ' now.'}}),
                event('contentBlockStop', {'contentBlockIndex': 0}),
                event(
                    'contentBlockStart',
                    {'contentBlockIndex': 1, 'start': {'toolUse': {'toolUseId': 't1', 'name': 'lookup'}}},
                ),
                event('contentBlockDelta', {'contentBlockIndex': 1, 'delta': {'toolUse': {'input': '{"q": '}}}),
                event('contentBlockDelta', {'contentBlockIndex': 1, 'delta': {'toolUse': {'input': '"x"}'}}}),
                event('contentBlockStop', {'contentBlockIndex': 1}),
                event('messageStop', {'stopReason': 'tool_use'}),
                event('metadata', {'usage': {'inputTokens': 9, 'outputTokens': 7, 'totalTokens': 16}, 'metrics': {}}),
            ]
        )
    )
    async with provider_for(bedrock) as provider:
        model = BedrockConverseModel(MODEL_ID, provider=provider)
        async with model.request_stream(user('Go'), None, PARAMS) as stream:
            texts = [e async for e in stream]
        response = stream.get()
    (received,) = bedrock.received
    assert received['path'].endswith('%3A0/converse-stream')
    assert received['headers']['accept'] == 'application/vnd.amazon.eventstream'
    assert received['auth'] == 'us-east-1/bedrock'
    assert len(texts) >= 3
    assert response.parts == [TextPart('Checking now.'), ToolCallPart('lookup', '{"q": "x"}', 't1')]
    assert response.usage == RequestUsage(input_tokens=9, output_tokens=7)
    assert (response.finish_reason, response.provider_details) == ('tool_call', {'finish_reason': 'tool_use'})
    assert response.provider_response_id == 'req-stream-1'


async def test_an_agent_streams_over_bedrock(bedrock: FakeBedrock) -> None:
    bedrock.script(
        Answer(
            frames=[
                event('contentBlockDelta', {'contentBlockIndex': 0, 'delta': {'text': 'Hello'}}),
                event('contentBlockDelta', {'contentBlockIndex': 0, 'delta': {'text': ' there'}}),
                event('messageStop', {'stopReason': 'end_turn'}),
            ]
        )
    )
    async with provider_for(bedrock) as provider:
        agent = Agent(BedrockConverseModel(MODEL_ID, provider=provider))
        async with agent.run_stream('Hi') as run:
            assert await run.get_output() == 'Hello there'


async def test_an_exception_event_in_a_stream_is_the_error_of_its_status(bedrock: FakeBedrock) -> None:
    bedrock.script(
        Answer(
            frames=[
                event('contentBlockDelta', {'contentBlockIndex': 0, 'delta': {'text': 'Hel'}}),
                exception('throttlingException', 'Too many requests, please wait.'),
            ]
        )
    )
    async with provider_for(bedrock) as provider:
        model = BedrockConverseModel(MODEL_ID, provider=provider)
        with pytest.raises(ModelRateLimitError) as caught:
            await drain(model, user('Go'))
    assert isinstance(caught.value, ModelHTTPError)
    assert (caught.value.status_code, caught.value.in_stream) == (429, True)
    assert caught.value.body == {'message': 'Too many requests, please wait.'}


async def test_a_stream_that_is_not_an_event_stream_is_an_api_error(bedrock: FakeBedrock) -> None:
    bedrock.script(Answer(frames=[b'\x00\x00\x00\x10' + b'not an event stream!']))
    async with provider_for(bedrock) as provider:
        model = BedrockConverseModel(MODEL_ID, provider=provider)
        with pytest.raises(ModelAPIError, match='Failed to decode response as an event stream'):
            await drain(model, user('Go'))


async def test_a_stream_cut_off_mid_message_is_an_api_error(bedrock: FakeBedrock) -> None:
    whole = event('contentBlockDelta', {'contentBlockIndex': 0, 'delta': {'text': 'Hello'}})
    bedrock.script(Answer(frames=[whole, whole[:20]]))
    async with provider_for(bedrock) as provider:
        model = BedrockConverseModel(MODEL_ID, provider=provider)
        with pytest.raises(ModelAPIError, match='ended in the middle of a message'):
            await drain(model, user('Go'))


@pytest.mark.parametrize(
    ('status', 'error_type', 'message', 'category'),
    [
        (429, 'ThrottlingException', 'Too many requests', ModelRateLimitError),
        (400, 'ValidationException', 'Input is too long for requested model.', ModelContextWindowExceededError),
        (400, 'ValidationException', 'The provided model identifier is invalid.', ModelNotFoundError),
        (403, 'AccessDeniedException', 'You do not have access', ModelAuthenticationError),
        (424, 'ModelErrorException', 'The model failed', None),
        (500, 'InternalServerException', 'Oops', ModelServerError),
    ],
)
async def test_error_statuses_become_the_category_their_aws_exception_names(
    bedrock: FakeBedrock, status: int, error_type: str, message: str, category: type[Exception] | None
) -> None:
    headers = {'x-amzn-errortype': f'{error_type}:http://internal.amazon.com/coral/com.amazon.bedrock/'}
    bedrock.script(Answer(status=status, body={'message': message}, headers=headers))
    async with provider_for(bedrock) as provider:
        with pytest.raises(ModelHTTPError) as caught:
            await BedrockConverseModel(MODEL_ID, provider=provider).request(user('Hi'), None, PARAMS)
    assert (caught.value.status_code, caught.value.provider_error_code) == (status, error_type)
    assert caught.value.body == {'message': message}
    if category is not None:
        assert isinstance(caught.value, category)


async def test_a_throttled_request_is_retried_and_signed_again(bedrock: FakeBedrock) -> None:
    throttled = Answer(
        status=429,
        body={'__type': 'com.amazon.coral#ThrottlingException', 'message': 'slow down'},
        headers={'retry-after': '0'},
    )
    bedrock.script(throttled, converse({'text': 'done'}))
    async with provider_for(bedrock, max_retries=1) as provider:
        response = await BedrockConverseModel(MODEL_ID, provider=provider).request(user('Hi'), None, PARAMS)
    assert response.parts == [TextPart('done')]
    assert [r['auth'] for r in bedrock.received] == ['us-east-1/bedrock'] * 2


async def test_reasoning_comes_back_as_signed_thinking_and_goes_back_as_reasoning_content(
    bedrock: FakeBedrock,
) -> None:
    redacted = base64.b64encode(b'opaque').decode()
    bedrock.script(
        converse(
            {'reasoningContent': {'reasoningText': {'text': 'Think.', 'signature': 'sig-1'}}},
            {'reasoningContent': {'redactedContent': redacted}},
            {'text': '42'},
        ),
        converse({'text': 'Still 42'}),
    )
    async with provider_for(bedrock) as provider:
        model = BedrockConverseModel(MODEL_ID, provider=provider)
        first = await model.request(user('Q'), {'thinking': 'low'}, PARAMS)
        history = [*user('Q'), first, ModelRequest(parts=[UserPromptPart('Sure?')])]
        await model.request(history, None, PARAMS)
    assert first.parts == [
        ThinkingPart('Think.', signature='sig-1', provider_name='bedrock'),
        ThinkingPart('', id='redacted_content', signature='opaque', provider_name='bedrock'),
        TextPart('42'),
    ]
    asked, again = (r['body'] for r in bedrock.received)
    assert asked['additionalModelRequestFields'] == {'thinking': {'type': 'enabled', 'budget_tokens': 2048}}
    assert again['messages'][1]['content'] == [
        {'reasoningContent': {'reasoningText': {'text': 'Think.', 'signature': 'sig-1'}}},
        {'reasoningContent': {'redactedContent': redacted}},
        {'text': '42'},
    ]


async def test_images_and_documents_go_as_base64_blocks(bedrock: FakeBedrock) -> None:
    bedrock.script(converse({'text': 'Seen.'}))
    prompt = UserPromptPart(
        [
            'Look:',
            BinaryContent(b'\x89PNG', media_type='image/png'),
            BinaryContent(b'%PDF-1.4', media_type='application/pdf'),
        ]
    )
    async with provider_for(bedrock) as provider:
        await BedrockConverseModel(MODEL_ID, provider=provider).request([ModelRequest(parts=[prompt])], None, PARAMS)
    assert bedrock.received[0]['body']['messages'][0]['content'] == [
        {'text': 'Look:'},
        {'image': {'format': 'png', 'source': {'bytes': base64.b64encode(b'\x89PNG').decode()}}},
        {
            'document': {
                'format': 'pdf',
                'name': 'Document 1',
                'source': {'bytes': base64.b64encode(b'%PDF-1.4').decode()},
            }
        },
    ]


async def test_an_inference_profile_setting_is_the_model_id_in_the_url(bedrock: FakeBedrock) -> None:
    arn = 'arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc'
    bedrock.script(converse({'text': 'ok'}))
    async with provider_for(bedrock) as provider:
        model = BedrockConverseModel('anthropic.claude-sonnet-4-5-20250929-v1:0', provider=provider)
        await model.request(user('Hi'), BedrockModelSettings(bedrock_inference_profile=arn), PARAMS)
    assert (
        bedrock.received[0]['path']
        == '/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Aapplication-inference-profile%2Fabc/converse'
    )
    assert bedrock.received[0]['auth'] == 'us-east-1/bedrock'


async def test_a_non_json_answer_is_unexpected_model_behavior(bedrock: FakeBedrock) -> None:
    bedrock.script(Answer(body=b'<html>busy</html>', headers={'content-type': 'text/html'}))
    async with provider_for(bedrock) as provider:
        with pytest.raises(UnexpectedModelBehavior):
            await BedrockConverseModel(MODEL_ID, provider=provider).request(user('Hi'), None, PARAMS)


async def test_a_json_answer_without_output_is_an_api_error(bedrock: FakeBedrock) -> None:
    bedrock.script(Answer(body={'unexpected': True}))
    async with provider_for(bedrock) as provider:
        with pytest.raises(ModelAPIError, match="no 'output' field"):
            await BedrockConverseModel(MODEL_ID, provider=provider).request(user('Hi'), None, PARAMS)


def test_history_starting_with_the_assistant_gets_a_user_turn_for_families_that_need_one() -> None:
    from edgewise.agent.models._bedrock_mapping import map_messages
    from edgewise.agent.providers.bedrock import BedrockProvider as P

    history: list[Any] = [ModelResponse(parts=[TextPart('Hi, how can I help?')]), *user('Weather?')]
    _, llama = map_messages(
        history, P.model_profile('meta.llama3-70b-instruct-v1:0') or {}, 'bedrock', 'm', instructions=None
    )
    _, claude = map_messages(history, P.model_profile(MODEL_ID) or {}, 'bedrock', 'm', instructions=None)
    assert [m['role'] for m in llama] == ['user', 'assistant', 'user']
    assert llama[0] == {'role': 'user', 'content': [{'text': '.'}]}
    assert [m['role'] for m in claude] == ['assistant', 'user']


async def test_an_image_url_is_downloaded_and_sent_as_bytes(bedrock: FakeBedrock) -> None:
    bedrock.script(converse({'text': 'A cat.'}))
    prompt = UserPromptPart(['What is this?', ImageUrl(f'{bedrock.url}/cat.png', force_download='allow-local')])
    async with provider_for(bedrock) as provider:
        await BedrockConverseModel(MODEL_ID, provider=provider).request([ModelRequest(parts=[prompt])], None, PARAMS)
    image = bedrock.received[0]['body']['messages'][0]['content'][1]
    assert image == {'image': {'format': 'png', 'source': {'bytes': base64.b64encode(b'\x89PNG-downloaded').decode()}}}


async def test_error_and_unknown_messages_in_a_stream(bedrock: FakeBedrock) -> None:
    error = frame({':message-type': 'error', ':error-code': 'InternalFailure', ':error-message': 'It broke'}, b'')
    bad_json = frame({':message-type': 'event', ':event-type': 'contentBlockDelta'}, b'{not json')
    other = frame({':message-type': 'something-new'}, b'{}')
    bedrock.script(Answer(frames=[other, error]), Answer(frames=[bad_json]))
    async with provider_for(bedrock) as provider:
        model = BedrockConverseModel(MODEL_ID, provider=provider)
        with pytest.raises(ModelAPIError, match='stream failed: InternalFailure: It broke') as caught:
            await drain(model, user('Go'))
        assert (caught.value.provider_error_code, caught.value.in_stream) == ('InternalFailure', True)
        with pytest.raises(UnexpectedModelBehavior, match='Invalid event'):
            await drain(model, user('Go'))


async def test_a_session_token_or_api_key_echoed_in_an_error_body_is_redacted(bedrock: FakeBedrock) -> None:
    echo = {'message': f'The security token {SESSION_TOKEN} is expired'}
    expired = Answer(status=403, body=echo, headers={'x-amzn-errortype': 'ExpiredTokenException'})
    bedrock.script(expired, Answer(status=400, body={'message': f'Bad key {BEARER}'}))
    async with provider_for(bedrock, aws_session_token=SESSION_TOKEN) as provider:
        with pytest.raises(ModelAuthenticationError) as caught:
            await BedrockConverseModel(MODEL_ID, provider=provider).request(user('Hi'), None, PARAMS)
    assert caught.value.body == {'message': 'The security token *** is expired'}
    assert SESSION_TOKEN not in str(caught.value)
    async with BedrockProvider(api_key=BEARER, base_url=bedrock.url, max_retries=0) as provider:
        with pytest.raises(ModelHTTPError) as rejected:
            await BedrockConverseModel(MODEL_ID, provider=provider).request(user('Hi'), None, PARAMS)
    assert rejected.value.body == {'message': 'Bad key ***'}


@pytest.mark.parametrize(
    ('provider_name', 'canonical_system', 'natively'),
    [('proxy', 'bedrock', True), ('bedrock', 'somebody-else', False), ('anthropic', None, False)],
)
async def test_signed_reasoning_goes_back_natively_only_where_bedrock_verifies_it(
    bedrock: FakeBedrock, provider_name: str, canonical_system: str | None, natively: bool
) -> None:
    turn = ModelResponse(
        parts=[ThinkingPart('Think.', signature='sig-1', provider_name=provider_name), TextPart('42')],
        provider_name=provider_name,
        canonical_system=canonical_system,
    )
    bedrock.script(converse({'text': 'Still 42'}))
    async with provider_for(bedrock) as provider:
        model = BedrockConverseModel(MODEL_ID, provider=provider)
        await model.request([*user('Q'), turn, ModelRequest(parts=[UserPromptPart('Sure?')])], None, PARAMS)
    body = bedrock.received[0]['body']
    signed = {'reasoningContent': {'reasoningText': {'text': 'Think.', 'signature': 'sig-1'}}}
    as_text = {'text': '<assistant_thinking>\nThink.\n</assistant_thinking>'}
    if natively:
        assert body['messages'][1] == {'role': 'assistant', 'content': [signed, {'text': '42'}]}
    else:  # as text, which this profile carries in a user turn ahead of the reply
        assert 'sig-1' not in str(body)
        assert body['messages'][:2] == [
            {'role': 'user', 'content': [{'text': 'Q'}, as_text]},
            {'role': 'assistant', 'content': [{'text': '42'}]},
        ]
