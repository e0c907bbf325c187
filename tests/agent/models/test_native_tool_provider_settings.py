"""pydantic-ai 2.68's `provider_settings` of native tools: the options only one provider has, in the request of the
provider that reads them; the fields they moved from still work, and must agree with them."""

from __future__ import annotations

from typing import Any

import pytest

from edgewise.agent.exceptions import UserError
from edgewise.agent.messages import ModelMessage, ModelRequest
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models._anthropic_mapping import anthropic_request_body
from edgewise.agent.models._openai_responses_mapping import responses_request_body
from edgewise.agent.models.openrouter import openrouter_fields
from edgewise.agent.native_tools import (
    AbstractNativeTool,
    AnthropicWebFetchToolSettings,
    CodeExecutionTool,
    FileSearchTool,
    ImageGenerationTool,
    OpenAIImageGenerationToolSettings,
    OpenRouterWebSearchToolSettings,
    WebFetchTool,
    WebSearchTool,
    provider_setting,
)
from edgewise.agent.profiles.anthropic import anthropic_model_profile
from edgewise.agent.profiles.openai import openai_model_profile

from ._helpers import validate_anthropic_body, validate_responses_body

HI: list[ModelMessage] = [ModelRequest.user_text_prompt('hi')]


def _anthropic(*tools: AbstractNativeTool) -> list[dict[str, Any]]:
    profile = anthropic_model_profile('claude-sonnet-4-5')
    assert profile is not None
    params = ModelRequestParameters(native_tools=list(tools))
    body = anthropic_request_body('claude-sonnet-4-5', HI, None, params, profile)
    validate_anthropic_body(body)
    return [t for t in body['tools'] if t.get('name') in ('web_search', 'web_fetch')]


def test_anthropic_web_fetch_options() -> None:
    moved = WebFetchTool(
        provider_settings={'anthropic': AnthropicWebFetchToolSettings(enable_citations=True, max_content_tokens=500)}
    )
    (fetch,) = _anthropic(moved)
    assert fetch == {
        'name': 'web_fetch',
        'type': 'web_fetch_20250910',
        'citations': {'enabled': True},
        'max_content_tokens': 500,
    }
    # The fields they moved from still work.
    (old,) = _anthropic(WebFetchTool(enable_citations=True, max_content_tokens=500))
    assert old == fetch
    # `use_cache` needs the newer version; `response_inclusion` only counts with code execution.
    (cached,) = _anthropic(
        WebFetchTool(provider_settings={'anthropic': {'use_cache': False, 'response_inclusion': 'excluded'}})
    )
    assert cached == {'name': 'web_fetch', 'type': 'web_fetch_20260318', 'use_cache': False}
    (with_code,) = _anthropic(
        WebFetchTool(provider_settings={'anthropic': {'response_inclusion': 'excluded'}}), CodeExecutionTool()
    )
    assert with_code == {'name': 'web_fetch', 'type': 'web_fetch_20260318', 'response_inclusion': 'excluded'}


def test_anthropic_web_search_response_inclusion_only_with_code_execution() -> None:
    tool = WebSearchTool(max_uses=2, provider_settings={'anthropic': {'response_inclusion': 'excluded'}})
    (alone,) = _anthropic(tool)
    assert alone == {'name': 'web_search', 'type': 'web_search_20250305', 'max_uses': 2}
    (with_code,) = _anthropic(tool, CodeExecutionTool())
    assert with_code == {
        'name': 'web_search',
        'type': 'web_search_20260318',
        'max_uses': 2,
        'response_inclusion': 'excluded',
    }


def test_openai_image_generation_options() -> None:
    settings = OpenAIImageGenerationToolSettings(
        quality='high', model='gpt-image-2', input_fidelity='high', partial_images=2
    )
    params = ModelRequestParameters(native_tools=[ImageGenerationTool(provider_settings={'openai': settings})])
    body = responses_request_body('gpt-5', HI, None, params, openai_model_profile('gpt-5'))
    validate_responses_body(body)
    (tool,) = body['tools']
    assert (tool['quality'], tool['model'], tool['input_fidelity'], tool['partial_images'], tool['action']) == (
        'high',
        'gpt-image-2',
        'high',
        2,
        'auto',
    )


def test_openrouter_web_plugin_options() -> None:
    tool = WebSearchTool(
        provider_settings={'openrouter': OpenRouterWebSearchToolSettings(engine='exa', max_results=3, mode='deep')}
    )
    fields = openrouter_fields({}, ModelRequestParameters(native_tools=[tool]), {})
    assert fields['plugins'] == [{'id': 'web', 'engine': 'exa', 'max_results': 3}]
    plain = openrouter_fields({}, ModelRequestParameters(native_tools=[WebSearchTool()]), {})
    assert plain['plugins'] == [{'id': 'web'}]


def test_a_moved_field_must_agree_with_provider_settings() -> None:
    with pytest.raises(
        UserError, match=r'`WebFetchTool` field `enable_citations` conflicts with `provider_settings\["anthropic"\]'
    ):
        WebFetchTool(enable_citations=True, provider_settings={'anthropic': {'enable_citations': False}})
    with pytest.raises(UserError, match='field `quality` conflicts'):
        ImageGenerationTool(quality='low', provider_settings={'openai': {'quality': 'high'}})
    # Agreeing, or left at its default, is fine.
    WebFetchTool(enable_citations=True, provider_settings={'anthropic': {'enable_citations': True}})
    tool = ImageGenerationTool(provider_settings={'openai': {'quality': 'high'}})
    assert provider_setting(tool, 'openai', 'quality', tool.quality) == 'high'
    assert provider_setting(tool, 'google', 'quality', 'auto') == 'auto'
    files = FileSearchTool(file_store_ids=['vs_1'], provider_settings={'xai': {'retrieval_mode': 'hybrid'}})
    assert files.provider_settings == {'xai': {'retrieval_mode': 'hybrid'}}


def test_provider_settings_round_trip_through_a_spec() -> None:
    from pydantic import TypeAdapter

    adapter: TypeAdapter[AbstractNativeTool] = TypeAdapter(AbstractNativeTool)
    tool = WebSearchTool(provider_settings={'openrouter': {'engine': 'exa'}})
    data = adapter.dump_python(tool, mode='json')
    assert data['provider_settings'] == {'openrouter': {'engine': 'exa'}}
    assert adapter.validate_python(data) == tool
