"""The public API of `edgewise.agent` is curated: `__all__` is pinned and the modules mirror pydantic-ai's."""

from __future__ import annotations

import importlib

import pytest

import edgewise.agent


def test_all_is_pinned() -> None:
    assert sorted(edgewise.agent.__all__) == [
        'AbstractConcurrencyLimiter',
        'AbstractToolset',
        'Agent',
        'AgentCapability',
        'AgentError',
        'AgentEventStream',
        'AgentNativeTool',
        'AgentRetries',
        'AgentRun',
        'AgentRunError',
        'AgentRunEvents',
        'AgentRunResult',
        'AgentRunResultEvent',
        'AgentSpec',
        'AgentStreamEvent',
        'AgentToolset',
        'AnyConcurrencyLimit',
        'ApprovalRequired',
        'ApprovalRequiredToolset',
        'AudioFormat',
        'AudioMediaType',
        'AudioUrl',
        'BaseToolCallPart',
        'BaseToolReturnPart',
        'BinaryAudio',
        'BinaryContent',
        'BinaryImage',
        'BoolCriteria',
        'CachePoint',
        'CallDeferred',
        'CallToolsNode',
        'CancellationToken',
        'Capability',
        'CapabilityFunc',
        'Choice',
        'Choices',
        'Citation',
        'CitationAnchor',
        'CitationSource',
        'CodeExecutionTool',
        'CombinedToolset',
        'CompactionPart',
        'ConcurrencyLimit',
        'ConcurrencyLimitExceeded',
        'ConcurrencyLimiter',
        'ContentCitationAnchor',
        'Conversation',
        'ConversationTypeAdapter',
        'CostCalculationFailedWarning',
        'CostNotFoundWarning',
        'DEFAULT_PROFILE',
        'DeferredLoadingToolset',
        'DeferredToolRequests',
        'DeferredToolRequestsEvent',
        'DeferredToolResults',
        'DeferredToolResultsEvent',
        'DocumentCitationSource',
        'DocumentFormat',
        'DocumentMediaType',
        'DocumentUrl',
        'EndStrategy',
        'EnqueuedMessagesEvent',
        'ExternalToolset',
        'FallbackExceptionGroup',
        'FilePart',
        'FileSearchTool',
        'FileUrl',
        'FilteredToolset',
        'FinalResult',
        'FinalResultEvent',
        'FinishReason',
        'FunctionToolCallEvent',
        'FunctionToolResultEvent',
        'FunctionToolset',
        'HandleResponseEvent',
        'ImageFormat',
        'ImageGenerationTool',
        'ImageMediaType',
        'ImageUrl',
        'IncludeReturnSchemasToolset',
        'IncompleteToolCall',
        'InlineDefsJsonSchemaTransformer',
        'InstructionPart',
        'InstrumentationSettings',
        'JsonSchemaTransformer',
        'MCPServerTool',
        'MarkerCitationAnchor',
        'MemoryTool',
        'ModelAPIError',
        'ModelHTTPError',
        'ModelMessage',
        'ModelMessagesTypeAdapter',
        'ModelProfile',
        'ModelProfileSpec',
        'ModelRequest',
        'ModelRequestContext',
        'ModelRequestNode',
        'ModelRequestPart',
        'ModelRequestState',
        'ModelResolutionContext',
        'ModelResponse',
        'ModelResponsePart',
        'ModelResponsePartDelta',
        'ModelResponseState',
        'ModelResponseStreamEvent',
        'ModelRetry',
        'ModelSelectionContext',
        'ModelSettings',
        'MultiModalContent',
        'NativeOutput',
        'NativeToolCallPart',
        'NativeToolReturnPart',
        'OutputToolCallEvent',
        'OutputToolResultEvent',
        'PartDeltaEvent',
        'PartEndEvent',
        'PartStartEvent',
        'PendingModelResponse',
        'PrefixedToolset',
        'PreparedToolset',
        'PromptedOutput',
        'PydanticAIDeprecationWarning',
        'RenamedToolset',
        'RequestUsage',
        'RetryPromptPart',
        'RunCancelled',
        'RunContext',
        'RunUsage',
        'SetMetadataToolset',
        'SkipModelRequest',
        'SkipToolExecution',
        'SkipToolValidation',
        'SpeechPart',
        'SpeechPartDelta',
        'StreamedRunResult',
        'StructuredContent',
        'StructuredDict',
        'SystemPromptPart',
        'TextContent',
        'TextOutput',
        'TextPart',
        'TextPartDelta',
        'ThinkingPart',
        'ThinkingPartDelta',
        'Tool',
        'ToolApproved',
        'ToolAvailabilityDeltaEvent',
        'ToolAvailabilityDeltaPart',
        'ToolCallEvent',
        'ToolCallPart',
        'ToolCallPartDelta',
        'ToolChoice',
        'ToolDefinition',
        'ToolDenied',
        'ToolFailed',
        'ToolOrOutput',
        'ToolOutput',
        'ToolResultEvent',
        'ToolReturn',
        'ToolReturnPart',
        'ToolsetFunc',
        'ToolsetTool',
        'UndrainedPendingMessagesError',
        'UnexpectedModelBehavior',
        'UploadedFile',
        'UrlContextTool',
        'UsageLimitExceeded',
        'UsageLimits',
        'UseEnumMemberDocstrings',
        'UserContent',
        'UserError',
        'UserPromptNode',
        'UserPromptPart',
        'VideoFormat',
        'VideoMediaType',
        'VideoUrl',
        'WebCitationSource',
        'WebFetchTool',
        'WebSearchTool',
        'WebSearchUserLocation',
        'WrapperToolset',
        'XSearchTool',
        'capture_run_messages',
        'format_as_xml',
    ]


def test_every_exported_name_resolves() -> None:
    for name in edgewise.agent.__all__:
        assert getattr(edgewise.agent, name) is not None


def test_public_modules_match_pydantic_ai() -> None:
    for module in ('messages', 'tools', 'output', 'usage', 'settings', 'result', 'exceptions', 'models',
                   'toolsets', 'models.test', 'models.function', 'models.openai', 'providers', 'providers.openai',
                   'providers.ollama', 'profiles', 'profiles.openai', 'agent', 'format_prompt', 'capabilities',
                   'models.instrumented', 'mcp', 'tool_manager', 'models.wrapper', 'concurrency',
                   'retries', 'realtime', 'realtime.settings', '_parts_manager'):  # fmt: skip
        importlib.import_module(f'edgewise.agent.{module}')


def test_mcp_all_is_pinned() -> None:
    import edgewise.agent.mcp as mcp

    assert mcp.__all__ == (
        'BaseResource',
        'CallToolFunc',
        'ContentBlock',
        'ElicitationCallback',
        'EmbeddedResource',
        'Icon',
        'LogHandler',
        'MCPError',
        'MCPServer',
        'MCPServerHTTP',
        'MCPServerSSE',
        'MCPServerStdio',
        'MCPServerStreamableHTTP',
        'MCPToolset',
        'MCPTransport',
        'ProcessToolCallback',
        'Prompt',
        'PromptArgument',
        'PromptMessage',
        'PromptResult',
        'PromptRole',
        'Resource',
        'ResourceAnnotations',
        'ResourceLink',
        'ResourceTemplate',
        'SSETransport',
        'ServerCapabilities',
        'StdioTransport',
        'StreamableHttpTransport',
        'ToolResult',
        'load_mcp_servers',
        'load_mcp_toolsets',
    )
    for name in mcp.__all__:
        assert getattr(mcp, name) is not None


def test_unknown_module_attribute_is_an_attribute_error() -> None:
    import edgewise.agent.messages as messages

    with pytest.raises(AttributeError) as exc_info:
        messages.NoSuchThing  # noqa: B018
    assert str(exc_info.value) == "module 'edgewise.agent.messages' has no attribute 'NoSuchThing'"


@pytest.mark.parametrize(
    ('module', 'names'),
    [
        ('_run_context', ('RunContext', 'AgentDepsT')),
        ('_enqueue', ('EnqueueContent', 'PendingMessage', 'PendingMessagePriority')),
        ('_spec', ('NamedSpec', 'CapabilitySpec')),
        ('_function_schema', ('function_schema', 'FunctionSchema', '_takes_ctx')),
        ('_output', ('OutputSpec', 'NativeOutputSchema', 'NativeOutput', 'PromptedOutput', 'TextOutput')),
    ],
)
def test_pydantic_ai_private_paths_that_ported_code_imports_keep_working(module: str, names: tuple[str, ...]) -> None:
    """pydantic-ai's own tests import these from its private modules of the same names (docs/compatibility.md)."""
    imported = importlib.import_module(f'edgewise.agent.{module}')
    assert all(getattr(imported, name) is not None for name in names)


def test_the_output_folder_names_no_more_than_its_schema_module_does() -> None:
    import edgewise.agent._output as output

    with pytest.raises(AttributeError) as exc_info:
        output.NoSuchThing  # noqa: B018
    assert str(exc_info.value) == "module 'edgewise.agent._output' has no attribute 'NoSuchThing'"
    with pytest.raises(AttributeError, match='has no attribute'):
        output.__wrapped__  # noqa: B018
