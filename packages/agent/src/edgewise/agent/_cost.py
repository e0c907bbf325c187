"""What a model request cost, in USD, from the public price lists of the `genai-prices` package.

Prices come from `genai-prices`, installed with the `prices` extra (`pip install 'edgewise-agent[prices]'`). It is
imported on first use only, and a run loads it in a worker thread before its first priced response (importing it
takes a noticeable fraction of a second, which must not block the event loop). Without it every cost stays `None`
(unknown), and a `UsageLimits.cost_limit` warns `CostNotFoundWarning` at the end of the run instead of being
enforced.

Pricing never fails a run: `best_effort_price` turns a model or provider that has no prices into `None`, and any
unexpected failure into a `CostCalculationFailedWarning` and `None`. `calculate_price_for_usage` is the strict
form (`ModelResponse.cost()`): it raises.
"""

from __future__ import annotations as _annotations

import importlib
import warnings
from collections.abc import Mapping
from datetime import datetime
from functools import cache
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ._warnings import CostCalculationFailedWarning

if TYPE_CHECKING:
    from ._messages.model_messages import ModelResponse
    from ._messages.usage_counts import RequestUsage, RunUsage

__all__ = (
    'best_effort_price',
    'calc_price',
    'calculate_price_for_usage',
    'fill_response_cost',
    'genai_prices_module',
    'load_prices',
    'lookup_context_window',
    'prices_installed',
    'prices_loaded',
    'priced_provider',
)

_MISSING = (
    "Pricing model requests needs the `genai-prices` package: install Edgewise's `prices` extra "
    "(`pip install 'edgewise-agent[prices]'`)."
)

# Edgewise's in-process models: genai-prices has no prices for them, so their responses are not looked up (which
# also spares a run of `TestModel` or `FunctionModel` the import of genai-prices).
_UNPRICED_PROVIDERS = frozenset({'test', 'function'})

_loaded = False


@cache
def prices_installed() -> bool:
    """Whether `genai-prices` (the `prices` extra) is installed; without it every cost is unknown (`None`)."""
    import importlib.util  # (loaded by the first cost asked for, not with the agent)

    return importlib.util.find_spec('genai_prices') is not None


def prices_loaded() -> bool:
    """Whether the prices are loaded (`load_prices` ran): pricing a response then blocks nothing."""
    return _loaded


def priced_provider(provider_name: str | None) -> bool:
    """Whether responses of this provider are looked up at all (not Edgewise's in-process test models)."""
    return provider_name not in _UNPRICED_PROVIDERS


def load_prices() -> None:
    """Import `genai-prices` and load its price data; a blocking call, which a run makes in a worker thread.

    Raises:
        ImportError: `genai-prices` is not installed (the message says which extra brings it).
    """
    global _loaded
    genai_prices_module().data_snapshot.get_snapshot()
    _loaded = True


def genai_prices_module() -> ModuleType:
    try:
        module = importlib.import_module('genai_prices')
        importlib.import_module('genai_prices.data_snapshot')
    except ImportError as error:
        raise ImportError(_MISSING) from error
    return module


def calc_price(
    usage: RequestUsage | RunUsage,
    model_ref: str,
    *,
    provider_id: str | None = None,
    provider_api_url: str | None = None,
    genai_request_timestamp: datetime | None = None,
    price_context: Mapping[str, Any] | None = None,
) -> Any:
    """`genai_prices.calc_price`: the price of `usage` for a model, by provider id or API URL; `price_context` (a
    response's `provider_details`) picks among prices that depend on the request (a service tier, say).

    Returns:
        genai-prices' `PriceCalculation` (its `total_price` is a `Decimal`).

    Raises:
        LookupError: genai-prices has no prices for this provider or model.
        ValueError: the usage cannot be priced (more cached than input tokens, for one).
        ImportError: `genai-prices` is not installed.
    """
    # `price_context` only when there is one: genai-prices releases before it (which pydantic-ai 1.x installs) take
    # every other argument.
    context = _price_context(price_context)
    extra: dict[str, Any] = {} if context is None else {'price_context': context}
    return genai_prices_module().calc_price(
        usage,
        model_ref,
        provider_id=provider_id,
        provider_api_url=provider_api_url,
        genai_request_timestamp=genai_request_timestamp,
        **extra,
    )


def _price_context(details: Mapping[str, Any] | None) -> dict[str, str] | None:
    # genai-prices matches string values only (a response's other details say nothing of its price).
    if not details:
        return None
    return {key: value for key, value in details.items() if isinstance(value, str)} or None


def calculate_price_for_usage(
    usage: RequestUsage | RunUsage,
    *,
    model_name: str,
    provider_api_url: str | None = None,
    provider_name: str | None = None,
    genai_request_timestamp: datetime | None = None,
    price_context: Mapping[str, Any] | None = None,
) -> Any:
    """The price of `usage` for a model: looked up by the provider's API URL first (the more precise key), then by
    the provider's name; errors are raised (see `calc_price`).

    Returns:
        genai-prices' `PriceCalculation` (its `total_price` is a `Decimal`).
    """
    if provider_api_url:
        try:
            return calc_price(
                usage,
                model_name,
                provider_api_url=provider_api_url,
                genai_request_timestamp=genai_request_timestamp,
                price_context=price_context,
            )
        except LookupError:  # an API URL genai-prices does not know: the provider's name may still be known
            pass
    return calc_price(
        usage,
        model_name,
        provider_id=provider_name,
        genai_request_timestamp=genai_request_timestamp,
        price_context=price_context,
    )


def best_effort_price(
    usage: RequestUsage | RunUsage,
    *,
    model_name: str | None,
    provider_api_url: str | None = None,
    provider_name: str | None = None,
    genai_request_timestamp: datetime | None = None,
    price_context: Mapping[str, Any] | None = None,
) -> Any:
    """`calculate_price_for_usage`, or `None` when the price cannot be known: no model name, no `genai-prices`,
    a model or provider without prices, a usage that cannot be priced. Any other failure warns
    `CostCalculationFailedWarning` and gives `None`: pricing never fails a run.
    """
    if not model_name or not priced_provider(provider_name) or not prices_installed():
        return None
    try:
        return calculate_price_for_usage(
            usage,
            model_name=model_name,
            provider_api_url=provider_api_url,
            provider_name=provider_name,
            genai_request_timestamp=genai_request_timestamp,
            price_context=price_context,
        )
    except (LookupError, ValueError):  # no prices for it, or a usage genai-prices cannot split: unknown
        return None
    except Exception as error:
        warnings.warn(f'Failed to get cost: {type(error).__name__}: {error}', CostCalculationFailedWarning, 2)
        return None


def fill_response_cost(response: ModelResponse) -> None:
    """Set `response.usage.cost` to the response's price when it is unset and the price can be known; a cost set
    already (by the provider, or by an earlier call) is kept. The response's `provider_details` are the price
    context (genai-prices prices some requests by their service tier)."""
    if response.usage.cost is not None:
        return
    price = best_effort_price(
        response.usage,
        model_name=response.model_name,
        provider_api_url=response.provider_url,
        provider_name=response.provider_name,
        genai_request_timestamp=response.timestamp,
        price_context=response.provider_details,
    )
    if price is not None:
        response.usage.cost = price.total_price


def lookup_context_window(
    model_name: str, *, provider_name: str | None = None, provider_api_url: str | None = None
) -> int | None:
    """The model's context window in genai-prices' data, looked up by the provider's API URL first, then by its
    name; `None` when genai-prices is not installed, knows neither, or records no window for the model. Loads the
    price data when not loaded yet (a blocking read)."""
    if not priced_provider(provider_name) or not prices_installed():
        return None
    load_prices()
    snapshot = genai_prices_module().data_snapshot.get_snapshot()
    for provider_id, api_url in ((None, provider_api_url), (provider_name, None)):
        if provider_id is None and api_url is None:
            continue
        try:
            _, model_info = snapshot.find_provider_model(model_name, None, provider_id, api_url)
        except LookupError:
            continue
        window = getattr(model_info, 'context_window', None)
        return window if isinstance(window, int) else None
    return None
