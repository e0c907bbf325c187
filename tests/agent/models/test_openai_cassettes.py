"""Replay of real Chat Completions traffic (`../shared/cassettes`): OpenAIChatModel against recorded responses.

Each recorded request is turned back into messages, tools and settings; the model sends its own request
(checked against the `openai` SDK's types and compared with the recorded one) and gets the recorded response,
which must come out as the same `ModelResponse`, streamed (re-chunked at random bytes) or not.
"""

from __future__ import annotations

import base64
import json
import random
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from dirty_equals import IsStr

from edgewise.agent.exceptions import ModelHTTPError, UnexpectedModelBehavior
from edgewise.agent.messages import (
    BinaryContent,
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelRequestPart,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserContent,
    UserPromptPart,
)
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models._openai_chat import FINISH_REASONS
from edgewise.agent.models.openai import OpenAIChatModel
from edgewise.agent.native_tools import WebSearchTool
from edgewise.agent.output import OutputObjectDefinition
from edgewise.agent.profiles.openai import OpenAIModelProfile
from edgewise.agent.providers.openai import OpenAIProvider
from edgewise.agent.tools import ToolDefinition

from ._cassettes import CASSETTES, Interaction, interactions
from ._chat import rechunked
from .conftest import validate_chat_body

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not CASSETTES.is_dir(), reason='the shared cassettes are not beside the project'),
]

CHAT = list(interactions('/chat/completions'))
_SETTINGS = {
    'max_completion_tokens': 'max_tokens',
    'max_tokens': 'max_tokens',
    'temperature': 'temperature',
    'top_p': 'top_p',
    'seed': 'seed',
    'stop': 'stop_sequences',
    'user': 'openai_user',
    'reasoning_effort': 'openai_reasoning_effort',
}


class Unsupported(Exception):
    """The recorded request uses something Edgewise cannot express yet (server-side tools)."""


def _content_item(part: dict[str, Any]) -> UserContent:
    # The recorded content part, as the user content that maps to it.
    kind = part['type']
    if kind == 'text':
        return str(part['text'])
    if kind == 'image_url':
        url = part['image_url']['url']
        detail = {'detail': part['image_url']['detail']} if 'detail' in part['image_url'] else None
        if url.startswith('data:'):
            image = BinaryContent.from_data_uri(url)
            image.vendor_metadata = detail
            return image
        return ImageUrl(url, vendor_metadata=detail)
    if kind == 'input_audio':
        media_type = {'wav': 'audio/wav', 'mp3': 'audio/mpeg'}[part['input_audio']['format']]
        return BinaryContent(base64.b64decode(part['input_audio']['data']), media_type=media_type)
    if kind == 'file':
        return BinaryContent.from_data_uri(part['file']['file_data'])
    raise Unsupported(f'content part {kind!r}')


def _messages(body: dict[str, Any]) -> list[ModelMessage]:
    messages: list[ModelMessage] = []
    parts: list[ModelRequestPart] = []
    names: dict[str, str] = {}
    for m in body['messages']:
        role, content = m['role'], m.get('content')
        if role == 'assistant':
            if parts:
                messages.append(ModelRequest(parts))
                parts = []
            response_parts: list[Any] = [ThinkingPart(m['reasoning_content'])] if m.get('reasoning_content') else []
            if content:
                response_parts.append(TextPart(content))
            for call in m.get('tool_calls') or ():
                names[call['id']] = call['function']['name']
                response_parts.append(ToolCallPart(call['function']['name'], call['function']['arguments'], call['id']))
            messages.append(ModelResponse(response_parts))
        elif isinstance(content, list):
            parts.append(UserPromptPart([_content_item(p) for p in content]))
        elif role in ('system', 'developer'):
            parts.append(SystemPromptPart(content))
        elif role == 'user':
            parts.append(UserPromptPart(content))
        else:
            parts.append(ToolReturnPart(names.get(m['tool_call_id'], 'tool'), content, m['tool_call_id']))
    if parts:
        messages.append(ModelRequest(parts))
    return messages


def _inputs(body: dict[str, Any]) -> tuple[list[ModelMessage], dict[str, Any], ModelRequestParameters, Any]:
    tools = [
        ToolDefinition(
            name=t['function']['name'],
            parameters_json_schema=t['function'].get('parameters', {}),
            description=t['function'].get('description'),
            strict=t['function'].get('strict'),
        )
        for t in body.get('tools', ())
    ]
    params = ModelRequestParameters(function_tools=tools, allow_text_output=body.get('tool_choice') != 'required')
    if (search := body.get('web_search_options')) is not None:
        location = (search.get('user_location') or {}).get('approximate')
        params.native_tools = [WebSearchTool(search_context_size=search['search_context_size'], user_location=location)]
    response_format = body.get('response_format') or {}
    if response_format.get('type') == 'json_schema':
        schema = response_format['json_schema']
        params.output_mode = 'native'
        params.output_object = OutputObjectDefinition(
            json_schema=schema['schema'],
            name=schema.get('name'),
            description=schema.get('description'),
            strict=schema.get('strict'),
        )
    elif response_format.get('type') == 'json_object':
        params.output_mode = 'prompted'
    settings = {ours: body[theirs] for theirs, ours in _SETTINGS.items() if theirs in body}
    system_role = next((m['role'] for m in body['messages'] if m['role'] in ('system', 'developer')), None)
    # The recorded web searches include one asked of a model that cannot search (`gpt-4o`): it is sent anyway,
    # to replay the API's refusal (with the model's own profile, Edgewise refuses it before sending).
    profile = OpenAIModelProfile(
        supports_json_schema_output=True,
        supports_json_object_output=True,
        openai_system_prompt_role=system_role,
        openai_chat_supports_web_search='web_search_options' in body,
    )
    return _messages(body), settings, params, profile


def _model(
    interaction: Interaction, respond: Callable[[], httpx.Response], profile: Any
) -> tuple[OpenAIChatModel, list[dict[str, Any]]]:
    sent: list[dict[str, Any]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        assert request.url.path == httpx.URL(interaction.request['uri']).path
        body = json.loads(request.content)
        validate_chat_body(body)
        sent.append(body)
        return respond()

    base_url = str(interaction.request['uri']).removesuffix('/chat/completions')
    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    provider = OpenAIProvider(base_url=base_url, api_key='test', http_client=client)
    return OpenAIChatModel(interaction.request_body['model'], provider=provider, profile=profile), sent


def _expected(data: dict[str, Any]) -> dict[str, Any]:
    choice = data['choices'][0]
    message = choice['message']
    return {
        'text': message.get('content') or None,
        # A call without an id (some compatible servers) gets a generated one.
        'calls': [
            (c['function']['name'], c['function']['arguments'], c['id'] or IsStr(regex='pyd_ai_[0-9a-f]{32}'))
            for c in message.get('tool_calls') or ()
        ],
        'finish_reason': FINISH_REASONS.get(choice.get('finish_reason') or 'stop'),
        'input_tokens': data['usage']['prompt_tokens'],
        'output_tokens': data['usage']['completion_tokens'],
        'model_name': data['model'],
        'id': data['id'],
    }


def _actual(response: ModelResponse) -> dict[str, Any]:
    return {
        'text': response.text,
        'calls': [(c.tool_name, c.args, c.tool_call_id) for c in response.tool_calls],
        'finish_reason': response.finish_reason,
        'input_tokens': response.usage.input_tokens,
        'output_tokens': response.usage.output_tokens,
        'model_name': response.model_name,
        'id': response.provider_response_id,
    }


def _comparable(messages: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    # What must match between our request and the recorded one: roles, texts, tool call ids and arguments.
    return [
        (
            m['role'],
            m.get('content') or None,
            m.get('tool_call_id'),
            [
                (c['id'], c['function']['name'], json.loads(c['function']['arguments']))
                for c in m.get('tool_calls') or ()
            ],
        )
        for m in messages
    ]


def _sse_of(data: dict[str, Any], rng: random.Random) -> bytes:
    """A Chat Completions stream saying what the recorded (non-streamed) response says."""
    message = data['choices'][0]['message']
    base = {'id': data['id'], 'object': 'chat.completion.chunk', 'created': data['created'], 'model': data['model']}
    chunks: list[dict[str, Any]] = [{'role': 'assistant', 'content': ''}]
    content = message.get('content') or ''
    while content:
        cut = rng.randint(1, 12)
        chunks.append({'content': content[:cut]})
        content = content[cut:]
    for index, call in enumerate(message.get('tool_calls') or ()):
        args = call['function']['arguments']
        chunks.append(
            {
                'tool_calls': [
                    {
                        'index': index,
                        'id': call['id'],
                        'type': 'function',
                        'function': {'name': call['function']['name'], 'arguments': args[:5]},
                    }
                ]
            }
        )
        chunks.extend(
            {'tool_calls': [{'index': index, 'function': {'arguments': args[i : i + 7]}}]}
            for i in range(5, len(args), 7)
        )
    events = [{**base, 'choices': [{'index': 0, 'delta': d, 'finish_reason': None}]} for d in chunks]
    events.append(
        {**base, 'choices': [{'index': 0, 'delta': {}, 'finish_reason': data['choices'][0]['finish_reason']}]}
    )
    events.append({**base, 'choices': [], 'usage': data['usage']})
    return (''.join(f'data: {json.dumps(e)}\n\n' for e in events) + 'data: [DONE]\n\n').encode()


async def _replay(interaction: Interaction, stream: bool) -> str:
    """Replay one interaction; what it checked: `'response'`, or `'request+response'` if our request matched."""
    body = interaction.request_body
    messages, settings, params, profile = _inputs(body)
    recorded = interaction.response
    status = recorded['status']['code']
    if stream and status == 200 and 'choices' in recorded.get('parsed_body', {}):
        data = _sse_of(recorded['parsed_body'], random.Random(interaction.id))

        def respond() -> httpx.Response:
            return httpx.Response(
                200, headers={'content-type': 'text/event-stream'}, content=rechunked(data, len(data))
            )

    else:
        respond = interaction.reply
    model, sent = _model(interaction, respond, profile)
    if status >= 400:
        with pytest.raises(ModelHTTPError) as exc_info:
            await model.request(messages, settings, params)  # type: ignore[arg-type]
        assert exc_info.value.status_code == status
        assert exc_info.value.body == recorded['parsed_body']['error']
    elif 'parsed_body' not in recorded:
        with pytest.raises(UnexpectedModelBehavior, match='chat completions endpoint, expected JSON data'):
            await model.request(messages, settings, params)  # type: ignore[arg-type]
    elif 'choices' not in recorded['parsed_body']:
        with pytest.raises(UnexpectedModelBehavior, match='chat completions endpoint: expected a chat completion'):
            await model.request(messages, settings, params)  # type: ignore[arg-type]
    elif stream:
        async with model.request_stream(messages, settings, params) as streamed:  # type: ignore[arg-type]
            async for _ in streamed:
                pass
        assert _actual(streamed.get()) == _expected(recorded['parsed_body'])
    else:
        response = await model.request(messages, settings, params)  # type: ignore[arg-type]
        assert _actual(response) == _expected(recorded['parsed_body'])
    (ours,) = sent
    same = _comparable(ours['messages']) == _comparable(body['messages'])
    same = same and [t['function']['name'] for t in ours.get('tools', ())] == [
        t['function']['name'] for t in body.get('tools', ())
    ]
    same = same and ours.get('web_search_options') == body.get('web_search_options')
    return 'request+response' if same else 'response'


@pytest.mark.parametrize('interaction', CHAT, ids=lambda i: i.id)
@pytest.mark.parametrize('stream', [False, True], ids=['json', 'sse'])
async def test_recorded_chat_completion(interaction: Interaction, stream: bool) -> None:
    try:
        await _replay(interaction, stream)
    except Unsupported as e:
        pytest.skip(f'not expressible in Edgewise yet: {e}')


async def test_how_many_recorded_interactions_are_handled() -> None:
    outcome: dict[str, int] = {'request+response': 0, 'response': 0, 'unsupported': 0}
    for interaction in CHAT:
        try:
            outcome[await _replay(interaction, stream=False)] += 1
        except Unsupported:
            outcome['unsupported'] += 1
    print(f'\nChat Completions cassette interactions ({len(CHAT)}): {outcome}')
    assert outcome == {'request+response': 51, 'response': 0, 'unsupported': 0}
