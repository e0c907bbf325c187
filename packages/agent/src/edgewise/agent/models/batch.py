"""The data of a provider's batch API (lower prices for more latency), as pydantic-ai 2.68's `models.batch`: what
`BatchModelRequests` and the `Model.batch_*` methods exchange."""

from __future__ import annotations as _annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, TypeAlias

from .._messages.model_messages import ModelMessage
from ..settings import ModelSettings
from ._request_parameters import ModelRequestParameters

__all__ = ('Batch', 'BatchRequest', 'BatchResult', 'BatchResultStatus', 'BatchStatus', 'EncodedBatchRequest')

BatchStatus: TypeAlias = Literal['in_progress', 'canceling', 'ended']
"""Where a batch job is; an ended one may hold requests that succeeded and others that did not."""

BatchResultStatus: TypeAlias = Literal['succeeded', 'errored', 'expired', 'canceled']
"""How the provider finished one request of a batch."""


@dataclass(kw_only=True)
class BatchRequest:
    """One model request to send in a batch."""

    custom_id: str
    """Matches the request to its result; unique within a batch."""
    messages: list[ModelMessage]
    """The messages sent to the model."""
    model_settings: ModelSettings | None = None
    """The request's settings."""
    model_request_parameters: ModelRequestParameters = field(default_factory=ModelRequestParameters)
    """The request's tools, output schema and other parameters."""


@dataclass(frozen=True, kw_only=True)
class EncodedBatchRequest:
    """A `BatchRequest` in one provider's batch format."""

    custom_id: str
    """Matches the request to its result within the batch."""
    group: str
    """What requests must share to go in one batch (endpoint, model...); stored on the `Batch`, so never a secret."""
    body: str
    """The provider's request, as JSON."""


@dataclass(kw_only=True)
class Batch:
    """A submitted batch job: plain data, which can be stored and used from another process."""

    id: str
    """The provider's id of the job."""
    model_name: str
    """The model the batch was submitted to."""
    provider_name: str
    """The provider the batch was submitted to."""
    group: str
    """The `group` its requests share."""
    status: BatchStatus
    """The job's state when this handle was last updated."""
    created_at: datetime
    """When the provider created the job."""
    request_count: int
    """How many requests the batch holds."""
    provider_details: dict[str, Any] | None = None
    """What else the provider says of the job."""


@dataclass(frozen=True, kw_only=True)
class BatchResult:
    """The provider's result for one request of a batch (`Model.batch_decode` makes it a `ModelResponse`)."""

    custom_id: str
    """The id of the request it answers."""
    status: BatchResultStatus
    """How the provider finished the request."""
    body: str | None = None
    """The provider's result or error, as JSON, for a request that `'succeeded'` or `'errored'`."""
