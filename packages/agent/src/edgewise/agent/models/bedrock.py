"""Amazon Bedrock's Converse API: `BedrockConverseModel`, over plain httpx (no boto3 needed).

`BedrockConverseModel('us.anthropic.claude-sonnet-4-5-20250929-v1:0')` (or `'bedrock:...'`) reads the AWS credentials
and region from the environment (see `BedrockProvider`). Requests go to `POST {base_url}/model/{model id}/converse`,
signed with SigV4; a stream goes to `.../converse-stream` and comes back in AWS's binary event-stream framing, decoded
by `_eventstream`. The JSON is made and read by the pure `_bedrock_mapping` module.
"""

from __future__ import annotations as _annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import aclosing
from typing import Any
from urllib.parse import quote

import pydantic_core

from ..exceptions import ModelAPIError, UnexpectedModelBehavior, UserError
from ..messages import FileUrl, ModelMessage, ModelResponse
from ..native_tools import AbstractNativeTool
from ..profiles import ModelProfileSpec
from ..providers import Provider
from ..settings import ModelSettings
from . import _http
from ._bedrock_errors import bedrock_http_error, bedrock_stream_error
from ._bedrock_mapping import (
    BedrockModelSettings,
    BedrockStreamedResponse,
    bedrock_model_response,
    bedrock_request_body,
    takes_url,
)
from ._eventstream import EventStreamDecoder, EventStreamError, EventStreamMessage
from ._provider_model import ProviderModel
from ._request_parameters import ModelRequestParameters
from ._streamed_response import StreamedResponse

__all__ = ('BedrockConverseModel', 'BedrockModelName', 'BedrockModelSettings', 'BedrockStreamedResponse')

# Defined beside their mapping; this module is their public home (and the one pydantic-ai names).
BedrockModelSettings.__module__ = __name__
BedrockStreamedResponse.__module__ = __name__

BedrockModelName = str
"""A Bedrock model id, inference profile id or ARN (`'us.anthropic.claude-sonnet-4-5-20250929-v1:0'`, ...)."""

EVENT_STREAM_MEDIA_TYPE = 'application/vnd.amazon.eventstream'


class BedrockConverseModel(ProviderModel):
    """A model on Amazon Bedrock behind the Converse API (`POST {base_url}/model/{model id}/converse`)."""

    _default_provider = 'bedrock'
    _endpoint_name = 'converse'

    def __init__(
        self,
        model_name: BedrockModelName,
        *,
        provider: str | Provider[Any] = 'bedrock',
        profile: ModelProfileSpec | None = None,
        settings: ModelSettings | None = None,
    ) -> None:
        """Configure the model.

        Args:
            model_name: The Bedrock model id (or inference profile id or ARN).
            provider: The provider or its name (`'bedrock'`, or a `BedrockProvider` of your own).
            profile: The model's profile (or a function of the name giving it); the provider's by default.
            settings: Default settings of this model's requests (`BedrockModelSettings`).

        Raises:
            UserError: the model is not served by the Converse API.
        """
        super().__init__(model_name, provider=provider, profile=profile, settings=settings)
        if self.profile.get('bedrock_supported_on_converse', True) is False:
            raise UserError(
                f'Model {model_name!r} is not served by the Bedrock Converse API; reach it through an '
                'OpenAI-compatible endpoint instead (`OpenAIChatModel` with the Bedrock endpoint as base URL).'
            )

    @classmethod
    def supported_native_tools(cls) -> frozenset[type[AbstractNativeTool]]:
        """None: Converse runs no server-side tools that Edgewise maps."""
        return frozenset()

    _http_error = staticmethod(bedrock_http_error)
    """How an error status becomes an error: of the category its AWS exception names."""

    def _model_url(self, model_id: str, *, stream: bool) -> str:
        action = 'converse-stream' if stream else 'converse'
        return f'{self._provider.base_url}/model/{quote(model_id, safe="")}/{action}'

    def _url(self, *, stream: bool) -> str:
        return self._model_url(self._model_name, stream=stream)

    def _needs_download(self, file: FileUrl) -> bool:
        # Converse reads `s3://` locations itself; any other URL is sent as the bytes it points to.
        return bool(file.force_download) or not takes_url(file.url)

    def _body(
        self, messages: list[ModelMessage], settings: Any, params: ModelRequestParameters, *, stream: bool
    ) -> dict[str, Any]:
        return bedrock_request_body(
            self._model_name, messages, settings, params, self.profile, provider_name=self._provider.name,
            accepts=self.accepts_stateless_artifacts,
        )  # fmt: skip

    def _call(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        params: ModelRequestParameters,
        *,
        stream: bool,
    ) -> _http.HTTPCall:
        call = super()._call(messages, model_settings, params, stream=stream)
        if inference_profile := self._merged_settings(model_settings).get('bedrock_inference_profile'):
            call.url = self._model_url(inference_profile, stream=stream)
        if stream:
            call.headers = {**call.headers, 'accept': EVENT_STREAM_MEDIA_TYPE}
        return call

    def _parse(self, data: Any) -> ModelResponse:
        return bedrock_model_response(data, model_name=self._model_name, provider_name=self._provider.name)

    def _stream_response(
        self, params: ModelRequestParameters, sse: _http.SSEStream, settings: Mapping[str, Any]
    ) -> StreamedResponse:
        events = converse_stream_events(sse, self._model_name)
        streamed = BedrockStreamedResponse(
            params, events, model_name=self._model_name, provider_name=self._provider.name
        )
        streamed.provider_response_id = sse.response.headers.get('x-amzn-requestid')
        return streamed


def _event(message: EventStreamMessage, model_name: str) -> dict[str, Any] | None:
    """The `{event type: payload}` of an event message; an exception or error message raises its error."""
    headers = message.headers
    kind = headers.get(':message-type')
    try:
        payload = pydantic_core.from_json(message.payload) if message.payload else {}
    except ValueError as e:
        raise UnexpectedModelBehavior(
            f'Invalid event from model {model_name!r}', message.payload.decode('utf-8', errors='replace')
        ) from e
    if kind == 'exception':
        raise bedrock_stream_error(model_name, headers.get(':exception-type'), payload)
    if kind == 'error':
        code, text = headers.get(':error-code'), headers.get(':error-message')
        raise ModelAPIError(
            model_name, f'Model {model_name!r} stream failed: {code}: {text}', provider_error_code=code, in_stream=True
        )
    event_type = headers.get(':event-type')
    if kind != 'event' or not isinstance(event_type, str):
        return None
    return {event_type: payload}


async def converse_stream_events(sse: _http.SSEStream, model_name: str) -> AsyncIterator[dict[str, Any]]:
    """The events of a ConverseStream body, decoded from its event-stream framing.

    Raises:
        ModelAPIError: the body is not a well-formed event stream, it ended mid-message, or it reported an error.
    """
    decoder = EventStreamDecoder()
    async with aclosing(sse.chunks()) as chunks:
        async for chunk in chunks:
            try:
                messages = decoder.feed(chunk)
            except EventStreamError as e:
                raise ModelAPIError(model_name, f'Failed to decode response as an event stream: {e}') from e
            for message in messages:
                if (event := _event(message, model_name)) is not None:
                    yield event
    if decoder.pending:
        raise ModelAPIError(model_name, 'The event stream ended in the middle of a message.')
