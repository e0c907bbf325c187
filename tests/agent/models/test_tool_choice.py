"""The `tool_choice` setting: resolved against the request's tools once, then mapped to each API's own form
(Chat Completions, Responses, Anthropic Messages, Gemini), and checked against the agent's run rules."""

from __future__ import annotations

import warnings
from typing import Any, cast

import pytest

from edgewise.agent import Agent, ToolOrOutput, UserError
from edgewise.agent.messages import ModelRequest
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models._anthropic_mapping import anthropic_request_body
from edgewise.agent.models._google_mapping import google_request_body
from edgewise.agent.models._openai_chat import build_body
from edgewise.agent.models._openai_responses_mapping import responses_request_body
from edgewise.agent.models._tool_choice import resolve_tool_choice
from edgewise.agent.models.test import TestModel
from edgewise.agent.profiles.anthropic import anthropic_model_profile
from edgewise.agent.profiles.google import google_model_profile
from edgewise.agent.profiles.openai import OpenAIModelProfile, openai_model_profile

from ._helpers import validate_anthropic_body, validate_google_body, validate_responses_body, weather_tool

WEATHER = weather_tool()
TIME = weather_tool(name='time')
OUTPUT = weather_tool(name='final_result', kind='output')
PROMPT = [ModelRequest.user_text_prompt('hi')]


def params(*, output: bool = False, text: bool = True, functions: bool = True) -> ModelRequestParameters:
    return ModelRequestParameters(
        function_tools=[WEATHER, TIME] if functions else [],
        output_tools=[OUTPUT] if output else [],
        allow_text_output=text,
    )


@pytest.mark.parametrize(
    ('choice', 'request_params', 'resolved'),
    [
        (None, params(), 'auto'),
        ('auto', params(output=True, text=False), 'required'),
        ('none', params(), 'none'),
        ([], params(), 'none'),
        ('none', params(output=True), ('auto', frozenset({'final_result'}))),
        ('none', params(output=True, text=False), ('required', frozenset({'final_result'}))),
        ('none', params(output=True, text=False, functions=False), 'required'),
        ('required', params(), 'required'),
        (['weather'], params(), ('required', frozenset({'weather'}))),
        (['weather', 'time'], params(), 'required'),
        (ToolOrOutput(function_tools=['weather']), params(), ('auto', frozenset({'weather'}))),
        (
            ToolOrOutput(function_tools=['weather']),
            params(output=True, text=False),
            ('required', frozenset({'weather', 'final_result'})),
        ),
        (ToolOrOutput(function_tools=['weather', 'time']), params(output=True), 'auto'),
        (ToolOrOutput(function_tools=[]), params(output=True), ('auto', frozenset({'final_result'}))),
        (ToolOrOutput(function_tools=[]), params(), 'none'),
    ],
)
def test_resolution(choice: Any, request_params: ModelRequestParameters, resolved: Any) -> None:
    assert resolve_tool_choice({'tool_choice': choice}, request_params) == resolved


def test_resolution_errors_and_warnings() -> None:
    with pytest.raises(UserError, match='`tool_choice` was set to "required", but no function tools are defined'):
        resolve_tool_choice({'tool_choice': 'required'}, params(functions=False, output=True))
    with pytest.raises(UserError, match=r"Invalid tool names in `tool_choice`: \{'nope'\}"):
        resolve_tool_choice({'tool_choice': ['nope']}, params())
    with pytest.raises(UserError, match=r'Invalid tool names in `tool_choice`.*Available function tools'):
        resolve_tool_choice({'tool_choice': ToolOrOutput(function_tools=['final_result'])}, params(output=True))
    with pytest.warns(UserWarning, match=r"not currently available and will be ignored: \['nope'\]"):
        assert resolve_tool_choice({'tool_choice': ['weather', 'nope']}, params()) == (
            'required',
            frozenset({'weather', 'nope'}),
        )
    with pytest.raises(UserError, match='`tool_choice` must be "auto", "none", "required"'):
        resolve_tool_choice({'tool_choice': 'sometimes'}, params())


def chat(settings: dict[str, Any], request_params: ModelRequestParameters, **profile: Any) -> dict[str, Any]:
    built = build_body(
        model_name='gpt-4o',
        messages=[],
        settings=settings,
        params=request_params,
        profile=cast(OpenAIModelProfile, profile) if profile else openai_model_profile('gpt-4o'),
        stream=False,
    )
    return {'tools': [t['function']['name'] for t in built.get('tools', [])], 'tool_choice': built.get('tool_choice')}


def test_chat_completions() -> None:
    # A choice among some tools sends only those; one forced tool is named, with all tools still sent.
    assert chat({'tool_choice': ['weather']}, params()) == {
        'tools': ['weather', 'time'],
        'tool_choice': {'type': 'function', 'function': {'name': 'weather'}},
    }
    assert chat({'tool_choice': ToolOrOutput(function_tools=['weather'])}, params(output=True, text=False)) == {
        'tools': ['weather', 'final_result'],
        'tool_choice': 'required',
    }
    assert chat({'tool_choice': 'none'}, params()) == {'tools': ['weather', 'time'], 'tool_choice': 'none'}
    # A server that cannot force a call: explicit forcing is refused, implicit forcing becomes `auto`.
    cannot: dict[str, Any] = {'supports_forced_tool_choice': False}
    with pytest.raises(UserError, match=r"tool_choice=\['weather'\] is not supported by model 'gpt-4o'"):
        chat({'tool_choice': ['weather']}, params(), **cannot)
    assert chat(
        {'tool_choice': ToolOrOutput(function_tools=['weather'])}, params(output=True, text=False), **cannot
    ) == {
        'tools': ['weather', 'final_result'],
        'tool_choice': 'auto',
    }


def responses(settings: dict[str, Any], request_params: ModelRequestParameters) -> Any:
    profile = openai_model_profile('gpt-5')
    built = responses_request_body('gpt-5', PROMPT, settings, request_params, profile)  # type: ignore[arg-type]
    validate_responses_body(built)
    assert [t['name'] for t in built['tools']] == [t.name for t in request_params.tool_defs.values()]
    return built['tool_choice']


def test_responses_limits_the_tools_in_tool_choice_and_always_sends_them_all() -> None:
    assert responses({'tool_choice': ['weather']}, params()) == {'type': 'function', 'name': 'weather'}
    assert responses({'tool_choice': ToolOrOutput(function_tools=['weather'])}, params(output=True)) == {
        'type': 'allowed_tools',
        'mode': 'auto',
        'tools': [{'type': 'function', 'name': 'final_result'}, {'type': 'function', 'name': 'weather'}],
    }
    assert responses({'tool_choice': 'required'}, params()) == 'required'
    assert responses({}, params(output=True, text=False)) == 'required'


def anthropic(
    settings: dict[str, Any], request_params: ModelRequestParameters, model: str = 'claude-sonnet-4-5'
) -> Any:
    profile = anthropic_model_profile(model)
    assert profile is not None
    built = anthropic_request_body(model, PROMPT, settings, request_params, profile)  # type: ignore[arg-type]
    validate_anthropic_body(built)
    return {'tools': [t['name'] for t in built['tools']], 'tool_choice': built['tool_choice']}


def test_anthropic() -> None:
    assert anthropic({'tool_choice': ['weather']}, params()) == {
        'tools': ['weather', 'time'],
        'tool_choice': {'type': 'tool', 'name': 'weather'},
    }
    assert anthropic({'tool_choice': 'none', 'parallel_tool_calls': False}, params()) == {
        'tools': ['weather', 'time'],
        'tool_choice': {'type': 'none'},  # no `disable_parallel_tool_use` beside `none`
    }
    assert anthropic({'tool_choice': ToolOrOutput(function_tools=['time'])}, params(output=True, text=False)) == {
        'tools': ['time', 'final_result'],
        'tool_choice': {'type': 'any'},
    }
    thinking = {'anthropic_thinking': {'type': 'enabled', 'budget_tokens': 1024}}
    with pytest.raises(UserError, match="Anthropic does not support tool_choice='required' with thinking mode"):
        anthropic({**thinking, 'tool_choice': 'required'}, params())
    with pytest.raises(UserError, match='Anthropic does not support forcing specific tools for this model'):
        anthropic({'tool_choice': ['weather']}, params(), model='claude-fable-5')
    # Forcing that only the output needs falls back to `auto`, with just the allowed tools.
    assert anthropic({**thinking, 'tool_choice': 'none'}, params(output=True, text=False)) == {
        'tools': ['final_result'],
        'tool_choice': {'type': 'auto'},
    }


def google(settings: dict[str, Any], request_params: ModelRequestParameters) -> Any:
    profile = google_model_profile('gemini-2.5-flash')
    assert profile is not None
    built = google_request_body(PROMPT, settings, request_params, profile)  # type: ignore[arg-type]
    validate_google_body(built)
    names = [d['name'] for d in built['tools'][0]['functionDeclarations']]
    return {'tools': names, 'config': built['toolConfig']['functionCallingConfig']}


def test_gemini() -> None:
    assert google({'tool_choice': ['weather']}, params()) == {
        'tools': ['weather', 'time'],
        'config': {'mode': 'ANY', 'allowedFunctionNames': ['weather']},
    }
    assert google({'tool_choice': ToolOrOutput(function_tools=['time'])}, params(output=True)) == {
        'tools': ['time', 'final_result'],
        'config': {'mode': 'AUTO'},
    }
    assert google({'tool_choice': 'none'}, params()) == {'tools': ['weather', 'time'], 'config': {'mode': 'NONE'}}
    assert google({}, params(output=True, text=False)) == {
        'tools': ['weather', 'time', 'final_result'],
        'config': {'mode': 'ANY'},
    }


def test_top_k_reaches_the_apis_that_take_it() -> None:
    profile = anthropic_model_profile('claude-sonnet-4-5')
    assert profile is not None
    assert anthropic_request_body('claude-sonnet-4-5', PROMPT, {'top_k': 5}, params(), profile)['top_k'] == 5
    gemini = google_model_profile('gemini-2.5-flash')
    assert gemini is not None
    assert google_request_body(PROMPT, {'top_k': 5}, params(), gemini)['generationConfig']['topK'] == 5


def test_the_agent_refuses_static_forcing_and_accepts_tool_or_output() -> None:
    agent = Agent(TestModel(), output_type=int)

    @agent.tool_plain
    def weather(city: str) -> str:
        return f'sunny in {city}'

    with pytest.raises(UserError, match='Use `ToolOrOutput` to combine specific function tools'):
        agent.run_sync('hi', model_settings={'tool_choice': ['weather']})
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        result = agent.run_sync('hi', model_settings={'tool_choice': ToolOrOutput(function_tools=['weather'])})
    assert isinstance(result.output, int)


HIDDEN = weather_tool(name='hidden')
"""A function tool the request withholds (a hidden tool, resolved `'withheld'`)."""


def withholding(*, output: bool = False) -> ModelRequestParameters:
    return ModelRequestParameters(
        function_tools=[WEATHER, HIDDEN],
        output_tools=[OUTPUT] if output else [],
        tool_visibility={'weather': 'visible', 'hidden': 'withheld'},
    )


def test_a_withheld_tool_is_a_known_name_left_out_of_the_choice() -> None:
    # as pydantic-ai 2.68: no warning of an unknown name, and the choice names only what reaches the wire
    assert resolve_tool_choice({'tool_choice': ['weather', 'hidden']}, withholding()) == (
        'required',
        frozenset({'weather'}),
    )
    choice = ToolOrOutput(function_tools=['weather', 'hidden'])
    assert resolve_tool_choice({'tool_choice': choice}, withholding(output=True)) == (
        'auto',
        frozenset({'weather', 'final_result'}),
    )
    # a choice of hidden tools only falls back on the output tools when there are some
    only_hidden = ToolOrOutput(function_tools=['hidden'])
    assert resolve_tool_choice({'tool_choice': only_hidden}, withholding(output=True)) == (
        'auto',
        frozenset({'final_result'}),
    )


def test_forcing_only_withheld_tools_is_refused() -> None:
    with pytest.raises(UserError, match=r"No tool in `tool_choice` is currently available: \['hidden'\]"):
        resolve_tool_choice({'tool_choice': ['hidden']}, withholding())
    every_tool_hidden = ModelRequestParameters(function_tools=[HIDDEN], tool_visibility={'hidden': 'withheld'})
    with pytest.raises(UserError, match='every function tool is hidden until it is revealed'):
        resolve_tool_choice({'tool_choice': 'required'}, every_tool_hidden)
