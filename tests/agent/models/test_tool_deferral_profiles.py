"""The profiles' tool modes (`tool_deferral_mode`, `tool_addition_mode`) per provider, as pydantic-ai 2.x sets them;
a model follows a mode only if its class renders it; the deprecated key names are translated when profiles merge;
and the check of a request's native tools settles the provider-run tool search by the mode."""

from __future__ import annotations

import pytest

from edgewise.agent._messages.tool_parts import TOOL_SEARCH_NATIVE_KIND
from edgewise.agent.exceptions import PydanticAIDeprecationWarning
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models._native_support import check_native_tools
from edgewise.agent.models.anthropic import AnthropicModel
from edgewise.agent.models.function import FunctionModel
from edgewise.agent.models.openai import OpenAIChatModel, OpenAIResponsesModel
from edgewise.agent.models.test import TestModel
from edgewise.agent.models.wrapper import WrapperModel
from edgewise.agent.native_tools import SUPPORTED_NATIVE_TOOLS, WebSearchTool
from edgewise.agent.native_tools._tool_search import ToolSearchTool
from edgewise.agent.profiles import DEFAULT_PROFILE, ModelProfile, merge_profile
from edgewise.agent.profiles.anthropic import anthropic_model_profile
from edgewise.agent.profiles.openai import openai_model_profile
from edgewise.agent.providers.anthropic import AnthropicProvider
from edgewise.agent.providers.ollama import OllamaProvider
from edgewise.agent.providers.openai import OpenAIProvider
from edgewise.agent.tools import ToolDefinition


def _modes(profile: ModelProfile | None) -> tuple[object, object, bool]:
    merged = merge_profile(DEFAULT_PROFILE, profile)
    searches = ToolSearchTool in merged['supported_native_tools']
    return merged['tool_deferral_mode'], merged['tool_addition_mode'], searches


def test_no_profile_claims_a_mode_by_default() -> None:
    assert (DEFAULT_PROFILE['tool_deferral_mode'], DEFAULT_PROFILE['tool_addition_mode']) == (None, None)


@pytest.mark.parametrize(
    ('name', 'expected'),
    [
        ('claude-sonnet-4-5', ('standalone', None, True)),
        ('claude-haiku-4-5-20251001', ('standalone', None, True)),
        ('claude-opus-4-8', ('standalone', 'by_reference', True)),
        ('claude-sonnet-4-0', (None, None, False)),
        ('claude-3-5-haiku-latest', (None, None, False)),
    ],
)
def test_anthropic_modes(name: str, expected: tuple[object, object, bool]) -> None:
    assert _modes(AnthropicProvider.model_profile(name)) == expected
    # the tool addition blocks are the Messages API's: the family's profile does not claim them
    assert _modes(anthropic_model_profile(name))[1] is None


@pytest.mark.parametrize(
    ('name', 'expected'),
    [
        ('gpt-5.4', ('with_tool_search', 'with_definitions', True)),
        ('gpt-5.6-mini', ('with_tool_search', 'with_definitions', True)),
        ('gpt-6-sol', ('with_tool_search', 'with_definitions', True)),
        ('gpt-5.4-nano', ('with_tool_search', 'with_definitions', False)),
        ('gpt-4o', ('with_tool_search', 'with_definitions', False)),
    ],
)
def test_openai_modes(name: str, expected: tuple[object, object, bool]) -> None:
    assert _modes(OpenAIProvider.model_profile(name)) == expected
    # OpenAI-compatible servers keep the family's profile, without OpenAI's own API's modes
    assert _modes(openai_model_profile(name)) == (None, None, expected[2])
    assert _modes(OllamaProvider.model_profile(name))[:2] == (None, None)


def test_a_model_follows_the_modes_its_class_renders() -> None:
    anthropic = AnthropicProvider(api_key='sk-test')
    openai = OpenAIProvider(api_key='sk-test')
    claude = AnthropicModel('claude-opus-4-8', provider=anthropic)
    assert (claude.tool_deferral_mode, claude.tool_addition_mode) == ('standalone', 'by_reference')
    assert AnthropicModel('claude-sonnet-4-5', provider=anthropic).tool_addition_mode is None  # not claimed
    gpt = OpenAIResponsesModel('gpt-5.4', provider=openai)
    assert (gpt.tool_deferral_mode, gpt.tool_addition_mode) == ('with_tool_search', 'with_definitions')
    chat = OpenAIChatModel('gpt-5.4', provider=openai)
    assert (chat.tool_deferral_mode, chat.tool_addition_mode) == (None, None)  # claimed, not rendered by this API
    claimed = AnthropicModel(
        'claude-sonnet-4-5', provider=anthropic, profile={'tool_deferral_mode': 'with_tool_search'}
    )
    assert claimed.tool_deferral_mode is None
    assert AnthropicModel('claude-sonnet-4-0', provider=anthropic).tool_deferral_mode is None
    assert TestModel(profile={'tool_deferral_mode': 'standalone'}).tool_deferral_mode is None
    function = FunctionModel(lambda m, i: None, profile={'tool_deferral_mode': 'standalone'})  # type: ignore[arg-type, return-value]
    assert function.tool_deferral_mode == 'standalone'
    assert WrapperModel(gpt).tool_deferral_mode == 'with_tool_search'
    assert WrapperModel(gpt).tool_addition_mode == 'with_definitions'
    assert WrapperModel(chat).tool_addition_mode is None


def test_the_deprecated_key_names_are_translated_with_a_warning() -> None:
    with pytest.warns(PydanticAIDeprecationWarning, match='`tool_additions` is deprecated'):
        assert merge_profile({}, {'tool_additions': 'by_reference'}) == {'tool_addition_mode': 'by_reference'}
    with pytest.warns(PydanticAIDeprecationWarning, match='`deferred_tools_require_tool_search` is deprecated'):
        assert merge_profile({'deferred_tools_require_tool_search': True}) == {'tool_deferral_mode': 'with_tool_search'}
    with pytest.warns(PydanticAIDeprecationWarning):
        assert merge_profile({'deferred_tools_require_tool_search': False}) == {}
    # the new name in the same profile wins
    both = ModelProfile(tool_additions='by_reference', tool_addition_mode='with_definitions')
    with pytest.warns(PydanticAIDeprecationWarning):
        merged = merge_profile(both)
    assert merged == {'tool_addition_mode': 'with_definitions'}


SHOWN = ToolDefinition(name='add')
HIDDEN = ToolDefinition(name='get_weather', defer_loading=True, with_native=TOOL_SEARCH_NATIVE_KIND)
FOUND = ToolDefinition(name='get_forecast', with_native=TOOL_SEARCH_NATIVE_KIND)
SEARCH = ToolDefinition(name='search_tools', unless_native=TOOL_SEARCH_NATIVE_KIND)


def _checked(tool: ToolSearchTool, mode: object, *tools: ToolDefinition) -> tuple[list[object], list[tuple[str, bool]]]:
    params = ModelRequestParameters(native_tools=[tool], function_tools=list(tools or (SHOWN, HIDDEN, FOUND, SEARCH)))
    checked = check_native_tools(params, SUPPORTED_NATIVE_TOOLS, mode)  # type: ignore[arg-type]
    return [t.kind for t in checked.native_tools], [(t.name, t.defer_loading) for t in checked.function_tools]


def test_a_kept_search_holds_back_every_tool_it_covers() -> None:
    assert _checked(ToolSearchTool(optional=True), 'standalone') == (
        ['tool_search'],
        [('add', False), ('get_weather', True), ('get_forecast', True)],
    )


def test_without_a_mode_an_optional_search_gives_way_to_search_tools() -> None:
    assert _checked(ToolSearchTool(optional=True), None) == (
        [],
        [('add', False), ('get_forecast', False), ('search_tools', False)],
    )


def test_an_optional_search_with_nothing_to_search_is_left_out() -> None:
    assert _checked(ToolSearchTool(optional=True), 'standalone', SHOWN) == ([], [('add', False)])
    # asked for by name, it stays
    assert _checked(ToolSearchTool(strategy='bm25'), 'standalone', SHOWN) == (['tool_search'], [('add', False)])
    assert _checked(ToolSearchTool(strategy='bm25'), None) == (
        ['tool_search'],
        [('add', False), ('get_forecast', False)],
    )


def test_other_native_tools_are_not_left_out_for_want_of_a_search() -> None:
    params = ModelRequestParameters(native_tools=[WebSearchTool(optional=True)], function_tools=[SHOWN])
    assert check_native_tools(params, SUPPORTED_NATIVE_TOOLS, None) is params
