"""Models: the interface every LLM backend implements, and `infer_model` for names like `'openai:gpt-4o'`.

Backends here: `models.test.TestModel`, `models.function.FunctionModel`, and `models.openai.OpenAIChatModel`
for OpenAI and every OpenAI-compatible server (`'openai:gpt-4o'`, `'ollama:llama3.2'`, `'groq:...'`).
"""

from __future__ import annotations as _annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

from ..exceptions import UserError
from ..messages import ModelMessage, ModelResponse
from ..output import OutputMode, OutputObjectDefinition
from ..settings import ModelSettings
from ..tools import ToolDefinition
from ._streamed import StreamedResponse

if TYPE_CHECKING:
    from types import TracebackType
    from typing import Self

    from ..providers import Provider
    from ..tools import RunContext

__all__ = (
    'Model',
    'ModelRequestParameters',
    'StreamedResponse',
    'KnownModelName',
    'ALLOW_MODEL_REQUESTS',
    'check_allow_model_requests',
    'infer_model',
    'KNOWN_PROVIDERS',
)

KnownModelName: TypeAlias = str
"""A model name: `'test'`, or `'<provider>:<model>'` such as `'openai:gpt-4o'`."""

KNOWN_PROVIDERS = (
    'anthropic',
    'bedrock',
    'cerebras',
    'cohere',
    'deepseek',
    'fireworks',
    'google-gla',
    'google-vertex',
    'grok',
    'groq',
    'heroku',
    'huggingface',
    'litellm',
    'mistral',
    'moonshotai',
    'ollama',
    'openai',
    'openai-chat',
    'openai-responses',
    'openrouter',
    'together',
    'vercel',
    'xai',
)
"""Provider prefixes of pydantic-ai model names; recognised so that naming one gives a clear error."""

ALLOW_MODEL_REQUESTS = True
"""Set to `False` (e.g. in tests) to make every request to a real provider fail; test models are exempt."""


def check_allow_model_requests() -> None:
    """Raise `RuntimeError` if `ALLOW_MODEL_REQUESTS` is off; provider models call it before each request."""
    if not ALLOW_MODEL_REQUESTS:
        raise RuntimeError('Model requests are not allowed, since ALLOW_MODEL_REQUESTS is False')


@dataclass(repr=False, kw_only=True)
class ModelRequestParameters:
    """What a model needs to know about a request besides the messages: tools and the kind of output."""

    function_tools: list[ToolDefinition] = field(default_factory=list)
    """The function tools the model may call."""
    output_mode: OutputMode = 'text'
    """How the output is asked for."""
    output_object: OutputObjectDefinition | None = None
    """The output schema, for native and prompted output."""
    output_tools: list[ToolDefinition] = field(default_factory=list)
    """The output tools the model may call to give its final answer."""
    allow_text_output: bool = True
    """Whether plain text is an acceptable final answer."""
    instruction_parts: list[str] | None = None
    """Instructions assembled for this request (also on the last `ModelRequest.instructions`)."""

    @property
    def tool_defs(self) -> dict[str, ToolDefinition]:
        """Function and output tools, by name."""
        return {t.name: t for t in (*self.function_tools, *self.output_tools)}

    def __repr__(self) -> str:
        return (
            f'ModelRequestParameters(function_tools={self.function_tools!r}, output_mode={self.output_mode!r}, '
            f'output_object={self.output_object!r}, output_tools={self.output_tools!r}, '
            f'allow_text_output={self.allow_text_output!r})'
        )


class Model(ABC):
    """A language model backend: turns a list of messages into a `ModelResponse`."""

    _settings: ModelSettings | None = None

    @property
    def settings(self) -> ModelSettings | None:
        """Default settings of requests to this model (the agent's and the run's override them)."""
        return self._settings

    @property
    def provider(self) -> Provider[Any] | None:
        """The provider requests go through; `None` for models that make no HTTP requests."""
        return None

    async def __aenter__(self) -> Self:
        """Enter the provider's context: its HTTP client is closed when the last context exits."""
        if (provider := self.provider) is not None:
            await provider.__aenter__()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        """Leave the provider's context, closing the HTTP client it made if this was the last one."""
        if (provider := self.provider) is not None:
            await provider.__aexit__(exc_type, exc, tb)

    @abstractmethod
    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        """Send the messages to the model and return its response.

        Args:
            messages: The conversation so far, ending with the request to answer. Do not modify it.
            model_settings: The merged settings of the model, the agent and the run.
            model_request_parameters: The tools and output kind of the request.
        """
        raise NotImplementedError

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncIterator[StreamedResponse]:
        """Stream the model's response: `async with model.request_stream(...) as response: async for event ...`.

        Leaving the block closes the stream (and its HTTP response), even in the middle of it.

        Args:
            messages: The conversation so far, ending with the request to answer. Do not modify it.
            model_settings: The merged settings of the model, the agent and the run.
            model_request_parameters: The tools and output kind of the request.
            run_context: The run's context, when the request is made by an agent run.

        Raises:
            NotImplementedError: this model does not stream.
        """
        raise NotImplementedError(f'Streamed requests are not supported by {type(self).__name__} yet.')
        yield  # pragma: no cover

    def customize_request_parameters(self, parameters: ModelRequestParameters) -> ModelRequestParameters:
        """Adapt the request parameters to the model (e.g. its JSON schema dialect); unchanged by default."""
        return parameters

    @property
    @abstractmethod
    def model_name(self) -> str:
        """The model's name."""
        raise NotImplementedError

    @property
    @abstractmethod
    def system(self) -> str:
        """The provider's name, as used in OpenTelemetry attributes (`gen_ai.system`)."""
        raise NotImplementedError

    @property
    def label(self) -> str:
        """`<system>:<model_name>`, used in spans and error messages."""
        return f'{self.system}:{self.model_name}'

    def __repr__(self) -> str:
        return f'{type(self).__name__}(model_name={self.model_name!r})'


def infer_model(model: Model | KnownModelName) -> Model:
    """The model for `model`: a `Model` as is, `'test'` as a `TestModel`, a `'<provider>:<name>'` string...

    Raises:
        UserError: the name is unknown, or its provider is not available in this release.
    """
    if isinstance(model, Model):
        return model
    if model == 'test':
        from .test import TestModel

        return TestModel()
    provider, sep, name = model.partition(':')
    if not sep:
        raise UserError(f'Unknown model: {model!r}. Use `<provider>:<model name>` (e.g. `openai:gpt-4o`), or `test`.')
    if provider in _OPENAI_CHAT_PROVIDERS:
        from .openai import OpenAIChatModel

        return OpenAIChatModel(name, provider='openai' if provider == 'openai-chat' else provider)
    if provider in KNOWN_PROVIDERS:
        raise UserError(
            f'Model provider {provider!r} (for model {name!r}) is not available in edgewise.agent yet. '
            'Use an OpenAI-compatible provider (`openai:`, `ollama:`, `groq:`, ...), `TestModel` or '
            '`FunctionModel`, or pass your own `Model`.'
        )
    raise UserError(f'Unknown model provider {provider!r} in model name {model!r}.')


_OPENAI_CHAT_PROVIDERS = frozenset(
    {
        'openai', 'openai-chat', 'ollama', 'openrouter', 'groq', 'deepseek', 'together', 'fireworks', 'cerebras',
        'vercel', 'grok', 'xai', 'moonshotai', 'heroku', 'litellm',
    }
)  # fmt: skip
