"""`EmbeddingResult`: the vectors of one embedding request, with the inputs, the model and the usage."""

from __future__ import annotations as _annotations

from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass, field
from datetime import datetime, timezone
from typing import Any, Literal

from ..usage import RequestUsage

__all__ = ('EmbedInputType', 'EmbeddingResult')

EmbedInputType = Literal['query', 'document']
"""What the inputs are: search queries (`'query'`) or the texts searched (`'document'`); some models embed the two
differently."""


def _now() -> datetime:
    return datetime.now(tz=timezone.utc)


@dataclass
class EmbeddingResult:
    """The vectors of an embedding request, one per input, in the order of the inputs.

    `result[i]` is the vector of the `i`-th input, and `result['some text']` that of the input `'some text'`.
    """

    embeddings: Sequence[Sequence[float]]
    """One vector per input."""
    _: KW_ONLY
    inputs: Sequence[str]
    """The texts embedded."""
    input_type: EmbedInputType
    """Whether they were embedded as queries or as documents."""
    model_name: str
    """The model that made the vectors (as the provider names it)."""
    provider_name: str
    """The provider (`'openai'`, `'google'`, ...)."""
    timestamp: datetime = field(default_factory=_now)
    """When the request was made."""
    usage: RequestUsage = field(default_factory=RequestUsage)
    """The tokens the request used (input tokens only)."""
    provider_details: dict[str, Any] | None = None
    """What else the provider said about the request."""
    provider_response_id: str | None = None
    """The provider's id of the response, if it gives one."""

    def __getitem__(self, item: int | str) -> Sequence[float]:
        """The vector of an input, by its position or by its text.

        Raises:
            IndexError: no input at that position.
            ValueError: no input with that text.
        """
        if isinstance(item, str):
            item = list(self.inputs).index(item)
        return self.embeddings[item]

    def cost(self) -> Any:
        """What the request cost, from the price lists of `genai-prices` (the `prices` extra): a price calculation
        with `total_price`, `input_price`, ...

        Raises:
            LookupError: there are no prices for this model or provider.
            ModuleNotFoundError: `genai-prices` is not installed.
        """
        from genai_prices import calc_price

        return calc_price(
            self.usage, self.model_name, provider_id=self.provider_name, genai_request_timestamp=self.timestamp
        )
