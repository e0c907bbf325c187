"""The warnings of `edgewise.agent` (pydantic-ai's `_warnings` path; `edgewise.agent.exceptions` re-exports them).

```
PydanticAIDeprecationWarning(DeprecationWarning, UserWarning)   a deprecated spelling was used; names the new one
CostCalculationFailedWarning(Warning)                           pricing a response failed unexpectedly
CostNotFoundWarning(Warning)                                    a `cost_limit` is set but no cost could be found
UsageExtractionFailedWarning(Warning)                           a response's usage could not be read
UsageLimitUnavailableWarning(Warning)                           a token or cost limit is set but responses lack usage
```
"""

from __future__ import annotations as _annotations

__all__ = (
    'CostCalculationFailedWarning',
    'CostNotFoundWarning',
    'PydanticAIDeprecationWarning',
    'UsageExtractionFailedWarning',
    'UsageLimitUnavailableWarning',
)


class PydanticAIDeprecationWarning(DeprecationWarning, UserWarning):
    """A deprecated spelling (a 1.x name, argument or module) was used; the message names its replacement.

    Every deprecation of `edgewise.agent` warns with this class. It is a `DeprecationWarning`, so code and filters
    written for one (`pytest.warns(DeprecationWarning)`, `-W error::DeprecationWarning`) keep catching it, and a
    `UserWarning`, as pydantic-ai 2.x's class of the same name is, so filters written for 2.x catch it too.
    Python's default filters hide a `DeprecationWarning` outside `__main__`: run tests with warnings enabled (pytest
    shows them) to see what to migrate.
    """


class CostCalculationFailedWarning(Warning):
    """Pricing a response failed for an unexpected reason; the cost stays unknown (`None`) and the run goes on."""


class CostNotFoundWarning(Warning):
    """A `UsageLimits.cost_limit` is set but the run's cost is unknown, so the limit could not be enforced."""


class UsageExtractionFailedWarning(Warning):
    """The usage of a response could not be read from the provider's answer; it counts as unknown. (pydantic-ai
    2.68's class; Edgewise does not emit it yet.)"""


class UsageLimitUnavailableWarning(Warning):
    """A token or cost limit is set, but some responses carry no usage, so the limit cannot see all of the run.
    (pydantic-ai 2.68's class; Edgewise does not emit it yet.)"""
