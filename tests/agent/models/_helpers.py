"""Helpers of the provider mapping tests: SDK request validators, recorded cassettes, an SSE splitter."""

from __future__ import annotations

import importlib
import json
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping
from functools import cache
from pathlib import Path
from typing import Any

import pydantic

CASSETTES_NAME = 'pydantic-ai-v1.96.1'


def _plain(value: Any) -> Any:
    # The SDKs' TypedDicts validate lists lazily (iterators): walking them runs the validation.
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, pydantic.BaseModel):  # a few request types embed response models (MCP tool results)
        return _plain(value.model_dump(exclude_unset=True))
    if isinstance(value, str | bytes | int | float | bool) or value is None:
        return value
    if isinstance(value, Iterable):
        return [_plain(v) for v in value]
    return value


@cache
def _adapter(kind: str) -> pydantic.TypeAdapter[Any]:
    if kind == 'anthropic':
        from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

        return pydantic.TypeAdapter(MessageCreateParamsNonStreaming)
    if kind == 'anthropic-beta':
        from anthropic.types.beta.message_create_params import (
            MessageCreateParamsNonStreaming as BetaMessageCreateParamsNonStreaming,
        )

        return pydantic.TypeAdapter(BetaMessageCreateParamsNonStreaming)
    from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming

    return pydantic.TypeAdapter(ResponseCreateParamsNonStreaming)


def _validate_typed_dict(kind: str, body: dict[str, Any]) -> None:
    sent = {k: v for k, v in body.items() if k != 'stream'}
    validated = _plain(_adapter(kind).validate_python(sent))
    # TypedDict validation drops unknown keys: a body that loses keys had a misspelled or unknown one.
    assert validated == _plain(sent)


_ANTHROPIC_BETA_TOOLS = ('web_fetch_', 'memory_', 'code_execution_', 'tool_search_tool_')


def validate_anthropic_body(body: dict[str, Any]) -> None:
    """Fail unless `body` is a valid Messages API request, as the `anthropic` SDK types it (its beta types, for a
    body with what only they have: MCP servers, cache diagnostics, `system` entries, and the server tools that need a
    beta flag)."""
    beta = (
        'mcp_servers' in body
        or 'diagnostics' in body
        or any(str(tool.get('type', '')).startswith(_ANTHROPIC_BETA_TOOLS) for tool in body.get('tools') or ())
        or any(message.get('role') == 'system' for message in body.get('messages') or ())
    )
    _validate_typed_dict('anthropic-beta' if beta else 'anthropic', body)


def validate_responses_body(body: dict[str, Any]) -> None:
    """Fail unless `body` is a valid Responses API request, as the `openai` SDK types it."""
    _validate_typed_dict('responses', body)


def validate_google_body(body: dict[str, Any]) -> None:
    """Fail unless each piece of `body` validates against the `google-genai` SDK types (unknown keys forbidden)."""
    from google.genai import types

    known = {
        'contents',
        'systemInstruction',
        'tools',
        'toolConfig',
        'generationConfig',
        'safetySettings',
        'labels',
        'cachedContent',
        'serviceTier',
    }
    assert set(body) <= known, set(body) - known
    for content in body['contents']:
        types.Content.model_validate(content)
    if 'systemInstruction' in body:
        types.Content.model_validate(body['systemInstruction'])
    for tool in body.get('tools', ()):
        types.Tool.model_validate(tool)
    if 'toolConfig' in body:
        types.ToolConfig.model_validate(body['toolConfig'])
    if 'generationConfig' in body:
        types.GenerationConfig.model_validate(body['generationConfig'])
    for setting in body.get('safetySettings', ()):
        types.SafetySetting.model_validate(setting)
    if 'serviceTier' in body:
        assert body['serviceTier'] in {tier.value for tier in types.ServiceTier}, body['serviceTier']


def cassettes_root() -> Path | None:
    """`<repo>/../shared/cassettes/pydantic-ai-v1.96.1` (or the nearest `shared` above), when present."""
    for parent in Path(__file__).resolve().parents:
        candidate = parent / 'shared' / 'cassettes' / CASSETTES_NAME
        if candidate.is_dir():
            return candidate
    return None


@cache
def load_interactions() -> list[tuple[str, int, dict[str, Any]]]:
    """Every recorded interaction: (cassette name, position, interaction)."""
    # Imported by name: PyYAML ships no type hints, and the stubs are not a dependency.
    yaml: Any = importlib.import_module('yaml')
    root = cassettes_root()
    if root is None:
        return []
    loader = getattr(yaml, 'CSafeLoader', yaml.SafeLoader)
    found: list[tuple[str, int, dict[str, Any]]] = []
    for path in sorted(root.rglob('*.yaml')):
        data = yaml.load(path.read_text(), Loader=loader)
        for position, interaction in enumerate(data.get('interactions') or ()):
            found.append((str(path.relative_to(root)), position, interaction))
    return found


def split_sse(text: str) -> Iterator[dict[str, Any]]:
    """The JSON `data` of each server-sent event in `text` (test-side; `[DONE]` and comments skipped)."""
    for block in text.replace('\r\n', '\n').split('\n\n'):
        data = '\n'.join(line[5:].lstrip(' ') for line in block.split('\n') if line.startswith('data:'))
        if data and data != '[DONE]':
            yield json.loads(data)


async def aiter_events(events: Iterable[dict[str, Any]]) -> AsyncIterator[dict[str, Any]]:
    """`events` as the async iterator a streamed response reads."""
    for event in events:
        yield event


def conversation(provider_name: str) -> list[Any]:
    """A conversation touching every part kind: prompts, thinking (signed by `provider_name` and by
    another provider), text, a tool call and its return, and retry prompts with and without a tool."""
    from datetime import datetime, timezone

    from edgewise.agent.messages import (
        ModelRequest,
        ModelResponse,
        RetryPromptPart,
        SystemPromptPart,
        TextPart,
        ThinkingPart,
        ToolCallPart,
        ToolReturnPart,
        UserPromptPart,
    )

    at = datetime(2026, 1, 1, tzinfo=timezone.utc)
    return [
        ModelRequest(
            [SystemPromptPart('Be brief.', timestamp=at), UserPromptPart('Weather in Paris?', timestamp=at)],
            instructions='old instructions',
        ),
        ModelResponse(
            [
                ThinkingPart('Need the tool.', id='rs_1', signature='c2lnLTE=', provider_name=provider_name),
                ThinkingPart('Foreign thought.', signature='foreign', provider_name='elsewhere'),
                TextPart('Checking.', id='msg_1', provider_name=provider_name),
                ToolCallPart('weather', {'city': 'Paris'}, 'call_1', id='fc_1', provider_name=provider_name),
            ],
            provider_name=provider_name,
            timestamp=at,
        ),
        ModelRequest([ToolReturnPart('weather', {'temp': 21}, 'call_1', timestamp=at)]),
        ModelResponse([ToolCallPart('weather', '{"town": 1}', 'call_2')], provider_name=provider_name, timestamp=at),
        ModelRequest(
            [RetryPromptPart('Unknown argument town', tool_name='weather', tool_call_id='call_2', timestamp=at)]
        ),
        ModelResponse([TextPart('Sunny')], provider_name=provider_name, timestamp=at),
        ModelRequest(
            [RetryPromptPart('Answer in French', timestamp=at), UserPromptPart(['Merci', 'Vite'], timestamp=at)],
            instructions='Answer kindly.',
        ),
    ]


def weather_tool(**overrides: Any) -> Any:
    """A function tool definition `weather(city: str)`."""
    from edgewise.agent.tools import ToolDefinition

    fields: dict[str, Any] = {
        'name': 'weather',
        'description': 'The weather in a city.',
        'parameters_json_schema': {
            'type': 'object',
            'properties': {'city': {'type': 'string'}},
            'required': ['city'],
            'additionalProperties': False,
        },
    } | overrides
    return ToolDefinition(**fields)
