"""Model profiles: per-family data, merging, and the JSON schema transformers."""

from __future__ import annotations

import copy
import json
from typing import Any, cast

import pytest
from hypothesis import given
from hypothesis import strategies as st
from inline_snapshot import snapshot

from edgewise.agent.exceptions import UserError
from edgewise.agent.models import ModelRequestParameters
from edgewise.agent.models._mapping import customize_request_parameters
from edgewise.agent.output import OutputObjectDefinition
from edgewise.agent.profiles import (
    DEFAULT_PROFILE,
    DEFAULT_PROMPTED_OUTPUT_TEMPLATE,
    DEFAULT_THINKING_TAGS,
    InlineDefsJsonSchemaTransformer,
    ModelProfile,
    merge_profile,
)
from edgewise.agent.profiles.amazon import amazon_model_profile
from edgewise.agent.profiles.anthropic import AnthropicModelProfile, anthropic_model_profile, resolve_anthropic_effort
from edgewise.agent.profiles.cohere import cohere_model_profile
from edgewise.agent.profiles.deepseek import deepseek_model_profile
from edgewise.agent.profiles.google import GoogleJsonSchemaTransformer, GoogleModelProfile, google_model_profile
from edgewise.agent.profiles.grok import GrokModelProfile, grok_model_profile
from edgewise.agent.profiles.groq import GroqModelProfile, groq_model_profile
from edgewise.agent.profiles.harmony import harmony_model_profile
from edgewise.agent.profiles.meta import meta_model_profile
from edgewise.agent.profiles.mistral import mistral_model_profile
from edgewise.agent.profiles.moonshotai import moonshotai_model_profile
from edgewise.agent.profiles.openai import (
    OpenAIJsonSchemaTransformer,
    OpenAIModelProfile,
    openai_model_profile,
    validate_openai_profile,
)
from edgewise.agent.profiles.qwen import qwen_model_profile
from edgewise.agent.profiles.zai import zai_model_profile
from edgewise.agent.tools import ToolDefinition

from ._helpers import weather_tool

NESTED: dict[str, Any] = {
    '$defs': {
        'Point': {'type': 'object', 'title': 'Point', 'properties': {'x': {'type': 'integer', 'default': 0}}},
        'Tree': {'type': 'object', 'properties': {'children': {'type': 'array', 'items': {'$ref': '#/$defs/Tree'}}}},
    },
    'type': 'object',
    'title': 'Root',
    'properties': {
        'point': {'$ref': '#/$defs/Point', 'description': 'Where.'},
        'tree': {'$ref': '#/$defs/Tree'},
        'name': {'type': 'string', 'minLength': 1, 'format': 'hostname', 'pattern': '^(?!x)'},
        'kind': {'oneOf': [{'const': 'a'}, {'const': 1}], 'discriminator': {'propertyName': 'k'}},
        'when': {'anyOf': [{'type': 'string', 'format': 'date-time'}]},
        'extra': {'type': 'object', 'additionalProperties': {'type': 'number', 'exclusiveMinimum': 0}},
        'flag': {'const': True},
        'pair': {'type': 'array', 'prefixItems': [{'type': 'string'}, {'const': 2.5}]},
    },
    'required': ['point'],
}


def test_openai_strict_forces_the_dialect() -> None:
    walker = OpenAIJsonSchemaTransformer(NESTED, strict=True)
    assert walker.walk() == snapshot(
        {
            'type': 'object',
            'properties': {
                'point': {'description': 'Where.', 'anyOf': [{'$ref': '#/$defs/Point'}]},
                'tree': {'$ref': '#/$defs/Tree'},
                'name': {'type': 'string', 'format': 'hostname', 'description': 'minLength=1, pattern=^(?!x)'},
                'kind': {'anyOf': [{'const': 'a'}, {'const': 1}]},
                'when': {'type': 'string', 'format': 'date-time'},
                'extra': {'type': 'object', 'additionalProperties': False, 'properties': {}, 'required': []},
                'flag': {'const': True},
                'pair': {'type': 'array', 'prefixItems': [{'type': 'string'}, {'const': 2.5}]},
            },
            'required': ['point', 'tree', 'name', 'kind', 'when', 'extra', 'flag', 'pair'],
            'additionalProperties': False,
            '$defs': {
                'Point': {
                    'type': 'object',
                    'properties': {'x': {'type': 'integer'}},
                    'additionalProperties': False,
                    'required': ['x'],
                },
                'Tree': {
                    'type': 'object',
                    'properties': {'children': {'type': 'array', 'items': {'$ref': '#/$defs/Tree'}}},
                    'additionalProperties': False,
                    'required': ['children'],
                },
            },
        }
    )


def test_openai_unforced_keeps_the_schema_and_says_it_cannot_be_strict() -> None:
    walker = OpenAIJsonSchemaTransformer(NESTED)
    assert walker.walk() == snapshot(
        {
            'type': 'object',
            'properties': {
                'point': {'description': 'Where.', 'anyOf': [{'$ref': '#/$defs/Point'}]},
                'tree': {'$ref': '#/$defs/Tree'},
                'name': {'type': 'string', 'minLength': 1, 'format': 'hostname', 'pattern': '^(?!x)'},
                'kind': {'oneOf': [{'const': 'a'}, {'const': 1}]},
                'when': {'type': 'string', 'format': 'date-time'},
                'extra': {
                    'type': 'object',
                    'additionalProperties': {'type': 'number', 'exclusiveMinimum': 0},
                    'properties': {},
                },
                'flag': {'const': True},
                'pair': {'type': 'array', 'prefixItems': [{'type': 'string'}, {'const': 2.5}]},
            },
            'required': ['point'],
            'additionalProperties': False,
            '$defs': {
                'Point': {
                    'type': 'object',
                    'properties': {'x': {'type': 'integer', 'default': 0}},
                    'additionalProperties': False,
                },
                'Tree': {
                    'type': 'object',
                    'properties': {'children': {'type': 'array', 'items': {'$ref': '#/$defs/Tree'}}},
                    'additionalProperties': False,
                },
            },
        }
    )
    assert walker.is_strict_compatible is False
    strict_ready = {'type': 'object', 'properties': {'a': {'type': 'string'}}, 'required': ['a']}
    walker = OpenAIJsonSchemaTransformer(strict_ready)
    assert walker.walk() == {**strict_ready, 'additionalProperties': False}
    assert walker.is_strict_compatible is True


def test_openai_recursive_root_is_inlined_with_hash_refs() -> None:
    schema = {
        '$ref': '#/$defs/Node',
        '$defs': {'Node': {'type': 'object', 'properties': {'next': {'$ref': '#/$defs/Node'}}}},
    }
    assert OpenAIJsonSchemaTransformer(schema, strict=True).walk() == snapshot(
        {
            '$defs': {
                'Node': {
                    'type': 'object',
                    'properties': {'next': {'$ref': '#'}},
                    'additionalProperties': False,
                    'required': ['next'],
                }
            },
            'type': 'object',
            'properties': {'next': {'$ref': '#'}},
            'additionalProperties': False,
            'required': ['next'],
        }
    )


def test_google_subset() -> None:
    assert GoogleJsonSchemaTransformer(NESTED).walk() == snapshot(
        {
            'type': 'object',
            'properties': {
                'point': {'description': 'Where.', 'anyOf': [{'$ref': '#/$defs/Point'}]},
                'tree': {'$ref': '#/$defs/Tree'},
                'name': {'type': 'string', 'minLength': 1, 'pattern': '^(?!x)', 'description': 'Format: hostname'},
                'kind': {'oneOf': [{'enum': ['a'], 'type': 'string'}, {'enum': [1], 'type': 'integer'}]},
                'when': {'type': 'string', 'description': 'Format: date-time'},
                'extra': {'type': 'object', 'additionalProperties': {'type': 'number'}},
                'flag': {'enum': [True], 'type': 'boolean'},
                'pair': {'type': 'array', 'prefixItems': [{'type': 'string'}, {'enum': [2.5], 'type': 'number'}]},
            },
            'required': ['point'],
            '$defs': {
                'Point': {'type': 'object', 'properties': {'x': {'type': 'integer', 'default': 0}}},
                'Tree': {
                    'type': 'object',
                    'properties': {'children': {'type': 'array', 'items': {'$ref': '#/$defs/Tree'}}},
                },
            },
        }
    )


def test_inline_defs_keeps_recursive_definitions() -> None:
    assert InlineDefsJsonSchemaTransformer(NESTED).walk() == snapshot(
        {
            '$defs': {
                'Tree': {
                    'type': 'object',
                    'properties': {'children': {'type': 'array', 'items': {'$ref': '#/$defs/Tree'}}},
                },
                'Root': {
                    'type': 'object',
                    'title': 'Root',
                    'properties': {
                        'point': {
                            'type': 'object',
                            'title': 'Point',
                            'properties': {'x': {'type': 'integer', 'default': 0}},
                            'description': 'Where.',
                        },
                        'tree': {
                            'type': 'object',
                            'properties': {'children': {'type': 'array', 'items': {'$ref': '#/$defs/Tree'}}},
                        },
                        'name': {'type': 'string', 'minLength': 1, 'format': 'hostname', 'pattern': '^(?!x)'},
                        'kind': {'discriminator': {'propertyName': 'k'}, 'oneOf': [{'const': 'a'}, {'const': 1}]},
                        'when': {'type': 'string', 'format': 'date-time'},
                        'extra': {'type': 'object', 'additionalProperties': {'type': 'number', 'exclusiveMinimum': 0}},
                        'flag': {'const': True},
                        'pair': {'type': 'array', 'prefixItems': [{'type': 'string'}, {'const': 2.5}]},
                    },
                    'required': ['point'],
                },
            },
            '$ref': '#/$defs/Root',
        }
    )
    with pytest.raises(UserError, match='Could not find \\$ref definition for Missing'):
        InlineDefsJsonSchemaTransformer({'$ref': '#/$defs/Missing'}).walk()


def test_inline_defs_with_a_recursive_root() -> None:
    schema = {
        '$ref': '#/$defs/Node',
        '$defs': {'Node': {'type': 'object', 'properties': {'next': {'$ref': '#/$defs/Node'}}}},
    }
    assert InlineDefsJsonSchemaTransformer(schema).walk() == snapshot(
        {
            '$defs': {'Node': {'type': 'object', 'properties': {'next': {'$ref': '#/$defs/Node'}}}},
            '$ref': '#/$defs/Node',
        }
    )


_scalars = st.one_of(
    st.sampled_from(
        [
            {'type': 'string'},
            {'type': 'integer', 'default': 1},
            {'const': 'x'},
            {'type': 'string', 'format': 'uri'},
            {'type': 'string', 'maxLength': 3},
        ]
    )
)
_schemas = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.builds(
            lambda props: {'type': 'object', 'properties': props},
            st.dictionaries(st.sampled_from('abcd'), inner, max_size=3),
        ),
        st.builds(lambda item: {'type': 'array', 'items': item}, inner),
        st.builds(lambda members: {'anyOf': members}, st.lists(inner, min_size=1, max_size=3)),
    ),
    max_leaves=8,
)


def _objects(schema: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    if isinstance(schema, dict):
        if schema.get('type') == 'object':
            found.append(schema)
        for value in schema.values():
            found.extend(_objects(value))
    elif isinstance(schema, list):
        for value in schema:
            found.extend(_objects(value))
    return found


@given(_schemas.map(lambda s: {'type': 'object', 'properties': {'root': s}}))
def test_openai_strict_output_always_fits_the_dialect(schema: dict[str, Any]) -> None:
    before = copy.deepcopy(schema)
    walked = OpenAIJsonSchemaTransformer(schema, strict=True).walk()
    assert schema == before  # the input is never modified
    for obj in _objects(walked):
        assert obj['additionalProperties'] is False
        assert obj['required'] == list(obj['properties'])
    text = repr(walked)
    assert "'default'" not in text
    assert "'maxLength'" not in text
    assert "'format': 'uri'" not in text
    # Forcing again changes nothing.
    assert OpenAIJsonSchemaTransformer(walked, strict=True).walk() == walked


@given(_schemas)
def test_google_output_has_no_const_title_or_string_format(schema: dict[str, Any]) -> None:
    walked = GoogleJsonSchemaTransformer({**schema, 'title': 'T'}).walk()
    text = repr(walked)
    assert "'const'" not in text
    assert "'title'" not in text
    assert "'format'" not in text


def test_customize_request_parameters_transforms_tools_and_output() -> None:
    loose = {'type': 'object', 'properties': {'a': {'type': 'string'}}}
    params = ModelRequestParameters(
        function_tools=[
            weather_tool(),
            weather_tool(name='loose', parameters_json_schema=loose),
            weather_tool(name='forced', parameters_json_schema=loose, strict=True),
        ],
        output_object=OutputObjectDefinition(json_schema=loose, name='Out'),
    )
    custom = customize_request_parameters(params, openai_model_profile('gpt-4o'))
    assert [(t.name, t.strict, t.parameters_json_schema) for t in custom.function_tools] == snapshot(
        [
            (
                'weather',
                True,
                {
                    'type': 'object',
                    'properties': {'city': {'type': 'string'}},
                    'required': ['city'],
                    'additionalProperties': False,
                },
            ),
            (
                'loose',
                False,
                {'type': 'object', 'properties': {'a': {'type': 'string'}}, 'additionalProperties': False},
            ),
            (
                'forced',
                True,
                {
                    'type': 'object',
                    'properties': {'a': {'type': 'string'}},
                    'additionalProperties': False,
                    'required': ['a'],
                },
            ),
        ]
    )
    assert custom.output_object == snapshot(
        OutputObjectDefinition(
            json_schema={'type': 'object', 'properties': {'a': {'type': 'string'}}, 'additionalProperties': False},
            name='Out',
            strict=False,
        )
    )
    assert customize_request_parameters(params, DEFAULT_PROFILE) is params


def test_a_transformed_tool_is_the_definition_with_only_its_schema_and_strictness_replaced() -> None:
    import dataclasses

    from edgewise.agent.models._mapping import transformed_schema, transformed_tool
    from edgewise.agent.tools import ToolDefinition

    @dataclasses.dataclass(repr=False, kw_only=True)
    class CheckedDefinition(ToolDefinition):
        checks: int = 0

        def __post_init__(self) -> None:
            self.checks += 1

    transformer = openai_model_profile('gpt-4o').get('json_schema_transformer', None)
    schema = {'type': 'object', 'properties': {'a': {'type': 'string'}}, 'required': ['a']}
    fields: dict[str, Any] = {'name': 't', 'parameters_json_schema': schema, 'description': 'd', 'timeout': 2.0}
    fields |= {'sequential': True, 'kind': 'output', 'metadata': {'m': 1}}
    for definition in (ToolDefinition(**fields), CheckedDefinition(**fields)):
        schema, strict = transformed_schema(transformer, definition.parameters_json_schema, definition.strict)
        transformed = transformed_tool(transformer, definition)
        assert transformed == dataclasses.replace(definition, parameters_json_schema=schema, strict=strict)
        assert type(transformed) is type(definition)
        assert (transformed.strict, definition.strict) == (True, None)  # the definition itself is unchanged
    assert transformed.checks == 2  # type: ignore[attr-defined]  # a subclass's __init__ runs, as under replace


def test_customize_request_parameters_refuses_what_the_model_cannot_do() -> None:
    native = ModelRequestParameters(output_mode='native', output_object=OutputObjectDefinition(json_schema={}))
    with pytest.raises(UserError, match='Native structured output is not supported by this model'):
        customize_request_parameters(native, ModelProfile())
    with pytest.raises(UserError, match='Tool output is not supported by this model'):
        customize_request_parameters(ModelRequestParameters(output_mode='tool'), ModelProfile(supports_tools=False))


def test_merge_profile_layers_dicts_later_keys_winning() -> None:
    base = OpenAIModelProfile(openai_supports_strict_tool_definition=False, supports_json_schema_output=False)
    override = ModelProfile(supports_json_schema_output=True, thinking_tags=('<t>', '</t>'))
    merged = merge_profile(base, override)
    assert merged == {
        'openai_supports_strict_tool_definition': False,
        'supports_json_schema_output': True,  # an override's value wins even when it is a default
        'thinking_tags': ('<t>', '</t>'),
    }
    assert base == {'openai_supports_strict_tool_definition': False, 'supports_json_schema_output': False}
    assert merged is not base
    assert merge_profile(None, None) == {}
    assert merge_profile(base) == base
    assert merge_profile(base) is not base
    # Keys of another family's profile are kept: profiles of different subclasses merge.
    assert merge_profile(ModelProfile(), AnthropicModelProfile(anthropic_supports_effort=True)) == {
        'anthropic_supports_effort': True
    }
    assert type(ModelProfile(supports_tools=False)) is dict


def test_default_profile_holds_every_key_at_its_default() -> None:
    # the two deprecated spellings are translated when profiles merge: they have no default
    deprecated = {'tool_additions', 'deferred_tools_require_tool_search'}
    assert set(DEFAULT_PROFILE) == set(ModelProfile.__annotations__) - deprecated
    assert DEFAULT_PROFILE['prompted_output_template'] == DEFAULT_PROMPTED_OUTPUT_TEMPLATE
    assert DEFAULT_PROFILE['thinking_tags'] == DEFAULT_THINKING_TAGS == ('<think>', '</think>')
    assert DEFAULT_PROFILE['supports_tools'] is True


def test_openai_profile_rejects_field_without_its_name() -> None:
    # A dict cannot check itself when built: the check runs when an OpenAI Chat model uses the profile.
    profile = OpenAIModelProfile(openai_chat_send_back_thinking_parts='field')
    with pytest.raises(UserError, match='openai_chat_thinking_field'):
        validate_openai_profile(profile)
    validate_openai_profile(merge_profile(profile, OpenAIModelProfile(openai_chat_thinking_field='reasoning')))
    validate_openai_profile(ModelProfile())


@pytest.mark.parametrize(
    ('name', 'reasons', 'always', 'role'),
    [
        ('gpt-4o', False, False, None),
        ('o3-mini', True, True, None),
        ('o1-mini', True, True, 'user'),
        ('gpt-5', True, True, None),
        ('gpt-5-chat-latest', False, False, None),
        ('gpt-5.1', True, False, None),
        ('gpt-5.3-chat-latest', True, True, None),  # at `medium` only (pydantic-ai 2.68)
    ],
)
def test_openai_reasoning_models(name: str, reasons: bool, always: bool, role: str | None) -> None:
    profile = openai_model_profile(name)
    profile = cast(OpenAIModelProfile, profile)
    assert (
        profile.get('supports_thinking', False),
        profile.get('thinking_always_enabled', False),
        profile.get('openai_system_prompt_role', None),
    ) == (
        reasons,
        always,
        role,
    )
    assert profile.get('openai_supports_encrypted_reasoning_content', False) is reasons


def test_anthropic_profiles() -> None:
    old, new = anthropic_model_profile('claude-3-5-haiku-latest'), anthropic_model_profile('claude-opus-4-7')
    old = cast(AnthropicModelProfile, old)
    new = cast(AnthropicModelProfile, new)
    assert (
        old.get('supports_json_schema_output', False),
        old.get('thinking_tags', DEFAULT_THINKING_TAGS),
        old.get('anthropic_disallows_sampling_settings', False),
    ) == (
        False,
        ('<thinking>', '</thinking>'),
        False,
    )
    assert (
        new.get('supports_json_schema_output', False),
        new.get('anthropic_supports_adaptive_thinking', False),
        new.get('anthropic_supports_effort', False),
        new.get('anthropic_disallows_sampling_settings', False),
        new.get('supports_forced_tool_choice', True),
    ) == (True, True, True, True, True)
    fable = anthropic_model_profile('claude-fable-5')
    fable = cast(AnthropicModelProfile, fable)
    assert not fable.get('supports_forced_tool_choice', True)
    assert resolve_anthropic_effort('xhigh', supports_xhigh=True) == 'xhigh'
    assert resolve_anthropic_effort('xhigh', supports_xhigh=False) == 'max'
    assert resolve_anthropic_effort('minimal', supports_xhigh=False) == 'low'


def test_google_profiles() -> None:
    flash, pro3, image = (
        google_model_profile(n) for n in ('gemini-2.5-flash', 'gemini-3-pro-preview', 'gemini-2.5-flash-image')
    )
    flash = cast(GoogleModelProfile, flash)
    pro3 = cast(GoogleModelProfile, pro3)
    image = cast(GoogleModelProfile, image)
    assert (
        flash.get('supports_thinking', False),
        flash.get('thinking_always_enabled', False),
        flash.get('google_supports_thinking_level', False),
    ) == (
        True,
        False,
        False,
    )
    assert (
        pro3.get('thinking_always_enabled', False),
        pro3.get('google_supports_thinking_level', False),
        pro3.get('google_supports_tool_combination', False),
    ) == (True, True, True)
    assert (
        image.get('supports_tools', True),
        image.get('supports_image_output', False),
        image.get('supports_json_schema_output', False),
    ) == (
        False,
        True,
        False,
    )


def test_family_profiles() -> None:
    assert (
        amazon_model_profile('nova')
        == meta_model_profile('llama')
        == ModelProfile(json_schema_transformer=InlineDefsJsonSchemaTransformer)
    )
    assert cohere_model_profile('command-r') is None
    assert cohere_model_profile('command-a-reasoning') == ModelProfile(
        supports_thinking=True, thinking_always_enabled=True
    )
    assert deepseek_model_profile('deepseek-reasoner') == ModelProfile(
        ignore_streamed_leading_whitespace=True, supports_thinking=True, thinking_always_enabled=True
    )
    assert deepseek_model_profile('deepseek-v4-flash') == ModelProfile(
        ignore_streamed_leading_whitespace=False, supports_thinking=True, thinking_always_enabled=False
    )
    assert mistral_model_profile('mistral-large') == ModelProfile(tool_call_id_length=9)
    assert mistral_model_profile('magistral-medium') == ModelProfile(
        tool_call_id_length=9, supports_thinking=True, thinking_always_enabled=True
    )
    assert mistral_model_profile('zai-glm-5-3') == ModelProfile(
        tool_call_id_length=9, json_schema_transformer=InlineDefsJsonSchemaTransformer
    )
    assert moonshotai_model_profile('kimi-k2') == ModelProfile(
        ignore_streamed_leading_whitespace=True, supports_thinking=False
    )
    assert moonshotai_model_profile('kimi-k2.6-preview') == ModelProfile(
        ignore_streamed_leading_whitespace=True, supports_thinking=True
    )
    assert zai_model_profile('glm-4') is None
    assert zai_model_profile('glm-4.6') == ModelProfile(
        supports_thinking=True,
        thinking_always_enabled=False,
        zai_supports_reasoning_effort=False,  # type: ignore[typeddict-unknown-key]
    )
    assert zai_model_profile('GLM-5.3-flash') == ModelProfile(
        supports_thinking=True,
        thinking_always_enabled=True,
        zai_supports_reasoning_effort=True,  # type: ignore[typeddict-unknown-key]
        zai_reasoning_effort_mapping={'minimal': 'low', 'medium': 'high', 'xhigh': 'max'},
        json_schema_transformer=InlineDefsJsonSchemaTransformer,
    )
    harmony = harmony_model_profile('gpt-oss-120b')
    harmony = cast(OpenAIModelProfile, harmony)
    assert (
        harmony.get('supports_forced_tool_choice', True),
        harmony.get('ignore_streamed_leading_whitespace', False),
    ) == (False, True)
    assert harmony.get('json_schema_transformer', None) is OpenAIJsonSchemaTransformer


def test_qwen_profiles() -> None:
    coder, q35, q3 = (qwen_model_profile(n) for n in ('qwen-3-coder-480b', 'qwen3.5-plus', 'qwen3-32b'))
    coder = cast(OpenAIModelProfile, coder)
    assert not coder.get('openai_supports_strict_tool_definition', True)
    assert q35 is not None
    assert q35.get('supports_json_schema_output', False)
    assert q3 is not None
    assert not q3.get('supports_json_schema_output', False)
    assert q3.get('json_schema_transformer', None) is InlineDefsJsonSchemaTransformer


def test_grok_and_groq_profiles() -> None:
    grok43, mini, grok2 = (grok_model_profile(n) for n in ('grok-4.3', 'grok-3-mini', 'grok-2'))
    grok43 = cast(GrokModelProfile, grok43)
    mini = cast(GrokModelProfile, mini)
    grok2 = cast(GrokModelProfile, grok2)
    assert (
        grok43.get('supports_thinking', False),
        grok43.get('thinking_always_enabled', False),
        grok43.get('grok_supports_builtin_tools', False),
    ) == (
        True,
        False,
        True,
    )
    assert (mini.get('thinking_always_enabled', False), mini.get('grok_reasoning_efforts', frozenset())) == (
        True,
        frozenset({'low', 'high'}),
    )
    assert (grok2.get('supports_thinking', False), grok2.get('grok_supports_builtin_tools', False)) == (False, False)
    qwen, r1, compound = (groq_model_profile(n) for n in ('qwen/qwen3-32b', 'deepseek-r1-distill', 'compound-beta'))
    compound = cast(GroqModelProfile, compound)
    assert compound.get('groq_always_has_web_search_builtin_tool', False)
    assert (qwen.get('supports_thinking', False), qwen.get('thinking_always_enabled', False)) == (True, False)
    assert (r1.get('supports_thinking', False), r1.get('thinking_always_enabled', False)) == (True, True)


def test_rewritten_schemas_are_kept_and_a_schema_changed_in_place_is_rewritten_again() -> None:
    schema: dict[str, Any] = {'type': 'object', 'properties': {'city': {'type': 'string'}}, 'required': ['city']}
    definition = ToolDefinition(name='where', parameters_json_schema=schema)
    params = ModelRequestParameters(function_tools=[definition])
    profile = openai_model_profile('gpt-4o')
    first = customize_request_parameters(params, profile).function_tools[0]
    again = customize_request_parameters(params, profile).function_tools[0]
    assert again.parameters_json_schema is first.parameters_json_schema
    assert first.strict is True
    assert first.parameters_json_schema['additionalProperties'] is False
    schema['properties']['when'] = {'type': 'string', 'format': 'date-time'}
    changed = customize_request_parameters(params, profile).function_tools[0]
    assert set(changed.parameters_json_schema['properties']) == {'city', 'when'}
    assert changed.strict is False  # `when` is not required: the schema no longer fits strict mode as it is


def test_the_kept_rewritten_schemas_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    from edgewise.agent.models import _mapping

    monkeypatch.setattr(_mapping, '_TRANSFORMED', {})
    monkeypatch.setattr(_mapping, '_TRANSFORMED_LIMIT', 2)
    profile = openai_model_profile('gpt-4o')
    for name in ('a', 'b', 'c'):
        schema = {'type': 'object', 'properties': {name: {'type': 'string'}}, 'required': [name]}
        params = ModelRequestParameters(function_tools=[ToolDefinition(name=name, parameters_json_schema=schema)])
        customize_request_parameters(params, profile)
    kept = [json.loads(key[2])['required'] for key in _mapping._TRANSFORMED]
    assert kept == [['b'], ['c']]  # the oldest went first
