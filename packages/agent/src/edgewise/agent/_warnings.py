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

import os
import sys

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


_RUN_ENTRIES = {
    name: name for name in ('iter', 'run', 'run_sync', 'run_stream', 'run_stream_sync', 'run_stream_events')
} | {'run_events': 'run_stream_events'}
"""The `Agent` methods a run starts from, whose name a warning about a run's argument gives, by the name of their
function on the stack (`run_stream_events` starts its run in `run_events`, at the first event asked for)."""


def _library_folders() -> tuple[str, ...]:
    """The folders (and files) whose frames are not the application's: Edgewise's packages, and the event loops,
    context managers and task groups a run goes through (between `run_sync` and its caller, or `async with` and its
    body). Looked up at each warning (they are rare), so that a backend loaded since counts too."""
    import contextlib

    import anyio

    import edgewise.graph

    folders = [os.path.dirname(__file__), *edgewise.graph.__path__, *anyio.__path__]
    for name in ('asyncio', 'sniffio', 'trio', 'outcome'):  # (the event loops anyio may be running on)
        folders += getattr(sys.modules.get(name), '__path__', ())
    return (*(os.path.join(folder, '') for folder in folders), contextlib.__file__)


def application_caller() -> tuple[int, str | None]:
    """Where a warning about an argument of a run should point: the `stacklevel` for `warnings.warn` in the
    function calling this one that reaches the first frame of the application, however many of Edgewise's frames,
    event loops and context managers lie between (`run_sync` starts a loop, `async with agent.iter(...)` enters
    through `contextlib`); and the `Agent` method the application called (`'run_sync'`, ...), or `None` if no run
    entry point is on the way. Python hides a `DeprecationWarning` that points at a library's line outside
    `__main__`: one that points at the application's own line is shown to a script's author.

    A run driven from a task the library started has no application frame above it: the warning points at
    whatever runs the event loop (or at the outermost frame).
    """
    folders = _library_folders()
    frame = sys._getframe(1)
    level, entry = 1, None
    while frame.f_back is not None and frame.f_code.co_filename.startswith(folders):
        code = frame.f_code
        if code.co_name in _RUN_ENTRIES and code.co_filename.startswith(folders[0]):
            entry = _RUN_ENTRIES[code.co_name]
        frame = frame.f_back
        level += 1
    return level, entry
