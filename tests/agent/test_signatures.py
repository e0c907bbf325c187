"""The public signatures are pydantic-ai 1.107's (parameter names, order and kinds) minus the parameters listed as
not yet available in docs/compatibility.md, plus Edgewise's additions (`persistence`)."""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from typing import Any

import pytest

from edgewise.agent import Agent, RunContext, Tool, capture_run_messages
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
from edgewise.agent.models.function import AgentInfo, FunctionModel
from edgewise.agent.models.test import TestModel
from edgewise.agent.output import NativeOutput, PromptedOutput, TextOutput, ToolOutput
from edgewise.agent.tools import ToolDefinition
from edgewise.agent.usage import RequestUsage, RunUsage, UsageLimits

RUN = ['user_prompt', '*output_type', '*conversation', '*message_history', '*conversation_id', '*run_id', '*model',
       '*instructions', '*deps', '*model_settings', '*usage_limits', '*usage', '*metadata', '*retries']  # fmt: skip


def _params(fn: Callable[..., Any]) -> list[str]:
    marks: dict[inspect._ParameterKind, str] = {
        inspect.Parameter.KEYWORD_ONLY: '*',
        inspect.Parameter.POSITIONAL_OR_KEYWORD: '',
        inspect.Parameter.POSITIONAL_ONLY: '/',
        inspect.Parameter.VAR_KEYWORD: '**',
    }
    return [marks[p.kind] + name for name, p in inspect.signature(fn).parameters.items() if name != 'self']


@pytest.mark.parametrize(
    ('fn', 'params'),
    [
        (Agent.__init__, ['model', '*output_type', '*instructions', '*system_prompt', '*deps_type', '*name',
                          '*description', '*model_settings', '*retries', '*validation_context', '*tools',
                          '*toolsets', '*defer_model_check', '*end_strategy', '*metadata', '*tool_timeout',
                          '*max_concurrency', '*capabilities', '**deprecated_kwargs']),
        (Agent.system_prompt, ['/func', '*dynamic', '*name', '*on_change']),
        (Agent.instructions, ['/func', '*name', '*on_change']),
        (Agent.output_validator, ['/func']),
        (Agent.override, ['*name', '*model', '*deps', '*tools', '*toolsets', '*instructions', '*model_settings',
                          '*metadata', '*retries', '*native_tools', '*spec', '*workspace', '**deprecated_kwargs']),
        (Tool.__init__, ['function', '*takes_ctx', '*max_retries', '*name', '*description', '*prepare',
                         '*args_validator', '*docstring_format', '*require_parameter_descriptions',
                         '*schema_generator', '*strict', '*sequential', '*requires_approval', '*metadata', '*tool_kind',
                         '*timeout',
                         '*defer_loading', '*include_return_schema', '*function_schema']),
        (Tool.from_schema, ['function', 'name', 'description', 'json_schema', 'takes_ctx', 'sequential',
                            'args_validator']),
        (UsageLimits, ['*cost_limit', '*request_limit', '*tool_calls_limit', '*input_tokens_limit',
                       '*output_tokens_limit', '*total_tokens_limit', '*per_request_input_tokens_limit',
                       '*count_tokens_before_request', '*request_tokens_limit', '*response_tokens_limit']),
        (RunUsage, ['*input_tokens', '*cache_write_tokens', '*cache_read_tokens', '*output_tokens',
                    '*input_audio_tokens', '*cache_audio_read_tokens', '*output_audio_tokens', '*details', '*cost',
                    '*requests', '*tool_calls', '**extra']),
        (RequestUsage, ['*input_tokens', '*cache_write_tokens', '*cache_read_tokens', '*output_tokens',
                        '*input_audio_tokens', '*cache_audio_read_tokens', '*output_audio_tokens', '*details',
                        '*cost', '**extra']),
        (RunContext, ['*deps', '*model', '*usage', '*usage_limits', '*prompt', '*messages', '*retries', '*tool_call_id',
                      '*tool_name',
                      '*retry', '*max_retries', '*run_step', '*run_id', '*conversation_id', '*metadata',
                      '*model_settings', '*validation_context', '*partial_output', '*tool_call_approved',
                      '*tool_call_metadata', '*agent', '*tool_manager', '*pending_messages', '*capabilities',
                      '*loaded_capability_ids', '*capability_active', '*_cancellation', '*_durable_operations',
                      '*deadline',
                      '*_event_stream_buffer', '*discovered_tool_names', '*instrumentation_version', '*workspace',
                      '*root_capability', '*trace_include_content', '*_model_id']),
        (ToolDefinition, ['*name', '*parameters_json_schema', '*description', '*outer_typed_dict_key', '*strict',
                          '*sequential', '*kind', '*metadata', '*timeout', '*defer_loading', '*unless_native',
                          '*with_native', '*tool_kind', '*return_schema', '*include_return_schema',
                          '*toolset_id', '*capability_id']),
        (ToolOutput, ['type_', '*name', '*description', '*max_retries', '*strict', '*sequential']),
        (NativeOutput, ['outputs', '*name', '*description', '*strict']),
        (PromptedOutput, ['outputs', '*name', '*description', '*template']),
        (TextOutput, ['output_function']),
        (TestModel, ['*call_tools', '*custom_output_text', '*custom_output_args', '*seed', '*model_name', '*profile',
                     '*settings']),
        (FunctionModel, ['function', '*stream_function', '*model_name', '*profile', '*settings']),
        (AgentInfo, ['*function_tools', '*allow_text_output', '*output_tools', '*model_settings',
                     '*model_request_parameters', '*instructions']),
        (capture_run_messages, []),
        (ModelRequest, ['parts', '*timestamp', '*instructions', '*kind', '*run_id', '*conversation_id', '*metadata',
                        '*state']),
        (ModelResponse, ['parts', '*usage', '*model_name', '*model_id', '*timestamp', '*kind', '*provider_name',
                         '*provider_url', '*canonical_system', '*provider_details',
                         '*provider_response_id', '*finish_reason', '*run_id', '*conversation_id', '*metadata',
                         '*workspace_ref', '*history_digest', '*failed_attempts', '*state']),
        (SystemPromptPart, ['content', '*timestamp', '*dynamic_ref', '*context_id', '*scope', '*part_kind']),
        (UserPromptPart, ['content', '*timestamp', '*part_kind']),
        (ToolReturnPart, ['tool_name', 'content', 'tool_call_id', '*tool_kind', '*metadata', '*timestamp', '*outcome',
                          '*part_kind']),
        (RetryPromptPart, ['content', '*tool_name', '*tool_call_id', '*timestamp', '*part_kind']),
        (TextPart, ['content', '*id', '*provider_name', '*provider_details', '*citations', '*part_kind']),
        (ToolCallPart, ['tool_name', 'args', 'tool_call_id', '*tool_kind', '*id', '*provider_name',
                        '*provider_details', '*part_kind']),
        (ThinkingPart, ['content', '*id', '*signature', '*provider_name', '*provider_details', '*part_kind']),
    ],
    ids=lambda v: getattr(v, '__qualname__', None),
)  # fmt: skip
def test_signature(fn: Callable[..., Any], params: list[str]) -> None:
    assert _params(fn) == params


def _typed_params(fn: Callable[..., Any]) -> list[str]:
    """`_params`, with a `**kwargs: Unpack[SomeTypedDict]` spelled out as the keyword arguments it stands for."""
    params = _params(fn)
    if params[-1:] != ['**kwargs']:
        return params
    options = typing.get_args(typing.get_type_hints(fn)['kwargs'])[0]
    return params[:-1] + ['*' + name for name in typing.get_origin(options).__annotations__]


ITER = [*RUN, '*infer_name', '*capabilities', '*persistence', '*toolsets', '*deferred_tool_results', '*spec',
        '*cancellation_token', '*timeout', '*workspace']  # fmt: skip


@pytest.mark.parametrize(
    ('method', 'typed', 'runtime'),
    [
        (Agent.run, [*ITER, '*event_stream_handler'], ['user_prompt', '*event_stream_handler', '**kwargs']),
        (Agent.run_sync, [*ITER, '*event_stream_handler'], ['user_prompt', '**kwargs']),
        (Agent.iter, ITER, [*ITER, '**deprecated_kwargs']),
        (Agent.run_stream, [*ITER, '*event_stream_handler'], ['user_prompt', '**kwargs']),
        (Agent.run_stream_events, ITER, ['user_prompt', '**kwargs']),
    ],
    ids=['run', 'run_sync', 'iter', 'run_stream', 'run_stream_events'],
)
def test_entry_points_take_the_arguments_of_iter_in_their_typed_overloads(
    method: Callable[..., Any], typed: list[str], runtime: list[str]
) -> None:
    overloads = typing.get_overloads(method)

    assert [_typed_params(o) for o in overloads] == [typed] * 2
    assert _params(method) == runtime


@pytest.mark.parametrize('method', [Agent.tool, Agent.tool_plain], ids=['tool', 'tool_plain'])
def test_tool_decorators_take_the_options_of_tool_in_their_typed_overloads(method: Callable[..., Any]) -> None:
    overloads = typing.get_overloads(method)

    assert [_params(o) for o in overloads] == [['/func'], ['**options']]
    assert inspect.signature(overloads[1]).parameters['options'].annotation == 'Unpack[ToolOptions[AgentDepsT]]'
    runtime = _params(method)
    assert runtime[0] == '/func'
    assert sorted(runtime[1:]) == sorted([
        '*name', '*description', '*retries', '*prepare', '*args_validator', '*docstring_format',
        '*require_parameter_descriptions', '*schema_generator', '*strict', '*sequential', '*requires_approval',
        '*metadata', '*tool_kind', '*timeout', '*defer_loading', '*include_return_schema',
    ])  # fmt: skip
