"""`ConcurrencyLimitedModel`: a model whose requests wait for a slot of a concurrency limiter.

A limit on a model bounds its requests in flight, whichever agents or runs send them; one `ConcurrencyLimiter`
handed to several models bounds them together (a provider's rate limit shared by its models). A streamed request
holds its slot until its stream is closed.
"""

from __future__ import annotations as _annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

from ..concurrency import (
    AbstractConcurrencyLimiter,
    AnyConcurrencyLimit,
    ConcurrencyLimit,
    ConcurrencyLimiter,
    concurrency_slot,
    holds_slot_of,
    marked_held,
    normalize_to_limiter,
)
from ..exceptions import UserError
from ..messages import ModelMessage, ModelResponse
from ..settings import ModelSettings
from . import KnownModelName, Model, infer_model
from ._model import RunContext
from ._request_parameters import ModelRequestParameters
from ._streamed_response import StreamedResponse
from .wrapper import WrapperModel

__all__ = ('ConcurrencyLimitedModel', 'limit_model_concurrency')


class ConcurrencyLimitedModel(WrapperModel):
    """Sends requests to `wrapped`, each once it holds a slot of `limiter` (streams until they are closed).

    ```python
    from edgewise.agent import Agent, ConcurrencyLimiter
    from edgewise.agent.models.concurrency import ConcurrencyLimitedModel

    pool = ConcurrencyLimiter(max_running=10, name='openai-pool')
    fast = ConcurrencyLimitedModel('openai:gpt-5-mini', limiter=pool)
    smart = ConcurrencyLimitedModel('openai:gpt-5', limiter=pool)  # both together: at most 10 requests
    agent = Agent(ConcurrencyLimitedModel('test', limiter=5))  # at most 5 requests of this agent's model
    ```
    """

    def __init__(
        self,
        wrapped: Model | KnownModelName | str,
        limiter: int | ConcurrencyLimit | AbstractConcurrencyLimiter,
    ) -> None:
        """Wrap a model.

        Args:
            wrapped: The model requests go to, or its name (`'openai:gpt-5'`).
            limiter: A number of slots (any number of requests may wait), a `ConcurrencyLimit` (whose `max_queued`
                bounds the waiting requests: one more fails with `ConcurrencyLimitExceeded`), or a limiter to
                share with other models.
        """
        super().__init__(infer_model(wrapped))
        self._limiter: AbstractConcurrencyLimiter = (
            limiter if isinstance(limiter, AbstractConcurrencyLimiter) else ConcurrencyLimiter.from_limit(limiter)
        )

    @property
    def limiter(self) -> AbstractConcurrencyLimiter:
        """The limiter whose slots this model's requests take."""
        return self._limiter

    def _check_not_held(self) -> None:
        # A slot of this limiter held by what sends the request (a wrapper around this one, or the agent run) would
        # make the request wait for itself once every slot is taken.
        if holds_slot_of(self._limiter):
            raise UserError(
                f'The limiter of the `ConcurrencyLimitedModel` of {self.model_name!r} is already held for this request '
                '(by a `ConcurrencyLimitedModel` or an agent run using the same limiter): waiting for a second slot '
                'could wait forever. Give each a limiter of its own, or limit concurrency in one place.'
            )

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        """The wrapped model's response, requested once a slot is free."""
        self._check_not_held()
        async with concurrency_slot(self._limiter, f'model:{self.model_name}', held=True):
            return await self.wrapped.request(messages, model_settings, model_request_parameters)

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncIterator[StreamedResponse]:
        """The wrapped model's streamed response, requested once a slot is free; the slot is held until the
        stream is closed."""
        self._check_not_held()
        # Opened with the limiter marked as held (a nested wrapper checks it), but the caller gets the stream back in
        # its own context: it may close the stream in another task.
        async with concurrency_slot(self._limiter, f'model:{self.model_name}'), AsyncExitStack() as stack:
            with marked_held(self._limiter):
                response = await stack.enter_async_context(
                    self.wrapped.request_stream(messages, model_settings, model_request_parameters, run_context)
                )
            yield response


def limit_model_concurrency(model: Model | KnownModelName | str, limiter: AnyConcurrencyLimit) -> Model:
    """`model` wrapped in a `ConcurrencyLimitedModel` with `limiter`; with `limiter=None`, the model itself.

    Args:
        model: A model or its name (a name is resolved to its model either way).
        limiter: A number of slots, a `ConcurrencyLimit`, a limiter to share, or `None` for no limit.
    """
    normalized = normalize_to_limiter(limiter)
    if normalized is None:
        return infer_model(model)
    return ConcurrencyLimitedModel(model, normalized)
