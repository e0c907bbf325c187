"""OpenAI Codex: `OpenAICodexModel`, OpenAI's models under a ChatGPT subscription, on the Codex backend.

The backend speaks the Responses API with a narrower dialect: it streams only (a `request` here streams and returns
the whole response), it keeps nothing (`store` is always `false`), and it refuses `max_tokens`, `temperature` and
`top_p` (the provider's profile leaves them out). Like the official Codex client, requests of a conversation carry
its id (`conversation_id` of the history) as the `session-id`, `thread-id` and `x-client-request-id` headers and as
the `prompt_cache_key`, which keeps them on the same prompt cache; the `extra_headers` and `openai_prompt_cache_key`
settings win over these.
"""

from __future__ import annotations as _annotations

from typing import Any, Literal

from ..messages import ModelMessage, ModelResponse
from ..profiles import ModelProfileSpec
from ..providers import Provider
from ..settings import ModelSettings
from . import _http
from ._request_parameters import ModelRequestParameters
from .openai import OpenAIModelName, OpenAIResponsesModel

__all__ = ('OpenAICodexModel',)

_SESSION_HEADERS = ('session-id', 'thread-id', 'x-client-request-id')


class OpenAICodexModel(OpenAIResponsesModel):
    """An OpenAI model under a ChatGPT (Codex) subscription (`POST {base_url}/responses`, always streamed).

    `OpenAICodexModel('gpt-5.4')` reads the Codex CLI's credentials (see `OpenAICodexProvider`).
    """

    _default_provider = 'openai-codex'

    def __init__(
        self,
        model_name: OpenAIModelName,
        *,
        provider: Literal['openai-codex'] | Provider[Any] = 'openai-codex',
        profile: ModelProfileSpec | None = None,
        settings: ModelSettings | None = None,
    ) -> None:
        """Configure the model.

        Args:
            model_name: The OpenAI model's name, e.g. `'gpt-5.4'`.
            provider: The provider or its name (`'openai-codex'`, or an `OpenAICodexProvider` of your own).
            profile: The model's profile (or a function of the name giving it); the provider's by default.
            settings: Default settings of this model's requests.
        """
        super().__init__(model_name, provider=provider, profile=profile, settings=settings)

    @property
    def batch_max_requests(self) -> None:
        """`None`: the Codex backend has no batch API."""
        return None

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        """Send the conversation and return the model's response (streamed, the only way the backend answers).

        Raises:
            ModelHTTPError: the API answered with a status of 400 or more (after retries).
            ModelAPIError: the API could not be reached, timed out, or the stream broke.
        """
        async with self.request_stream(messages, model_settings, model_request_parameters) as streamed:
            async for _ in streamed:
                pass
        return streamed.get()

    def _call(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        params: ModelRequestParameters,
        *,
        stream: bool,
    ) -> _http.HTTPCall:
        session_id = next((m.conversation_id for m in reversed(messages) if m.conversation_id), None)
        if session_id is not None:
            merged: dict[str, Any] = dict(self._merged_settings(model_settings))
            headers = dict(merged.get('extra_headers') or {})
            given = {name.lower() for name in headers}  # header names are case-insensitive
            headers.update({name: session_id for name in _SESSION_HEADERS if name not in given})
            merged['extra_headers'] = headers
            merged.setdefault('openai_prompt_cache_key', session_id)
            model_settings = ModelSettings(**merged)  # type: ignore[typeddict-item]
        return super()._call(messages, model_settings, params, stream=stream)

    def _body(
        self, messages: list[ModelMessage], settings: Any, params: ModelRequestParameters, *, stream: bool
    ) -> dict[str, Any]:
        body = super()._body(messages, settings, params, stream=stream)
        body['store'] = False  # the backend keeps nothing, and refuses a request asking it to
        return body
