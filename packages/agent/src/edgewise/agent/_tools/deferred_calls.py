"""Deferred tool calls: the calls a run ends on (`DeferredToolRequests`) and their answers (`DeferredToolResults`).

A call is deferred when its tool is external (its result comes from outside the run) or needs approval. The
run ends with `DeferredToolRequests` as its output; the next run, given the same message history and a
`DeferredToolResults` with an answer per call id, runs the approved calls, answers the denied ones and uses
the external results, then goes on.
"""

from __future__ import annotations as _annotations

from dataclasses import KW_ONLY, dataclass, field
from typing import Annotated, Any, Literal, TypeAlias

from pydantic import Discriminator, Tag

from .._messages.content import ToolReturn
from .._messages.model_messages import RetryPromptPart, ToolCallPart
from ..exceptions import ModelRetry, ToolFailed

__all__ = (
    'DeferredToolRequests',
    'DeferredToolResults',
    'ToolApproved',
    'ToolDenied',
    'DeferredToolApprovalResult',
    'DeferredToolCallResult',
    'DeferredToolResult',
)


@dataclass(kw_only=True)
class ToolApproved:
    """An approval: the tool runs, with `override_args` instead of the model's arguments when given."""

    override_args: dict[str, Any] | None = None
    """Arguments to call the tool with instead of the model's."""
    kind: Literal['tool-approved'] = 'tool-approved'


@dataclass
class ToolDenied:
    """A denial: the tool does not run and the model is told `message`."""

    message: str = 'The tool call was denied.'
    """What the model is told."""
    _: KW_ONLY
    kind: Literal['tool-denied'] = 'tool-denied'


DeferredToolApprovalResult: TypeAlias = Annotated[ToolApproved | ToolDenied, Discriminator('kind')]
"""The answer to a call that needed approval."""


def _call_result_kind(value: Any) -> str | None:
    # The tag of an external result: `kind` (ToolReturn; and ModelRetry, ToolFailed once stored) or `part_kind`
    # (RetryPromptPart), on an object or in its stored dict; `None` for any other value, which is kept as it is.
    if isinstance(value, dict):
        return value.get('kind', value.get('part_kind'))
    if isinstance(value, ModelRetry):
        return 'model-retry'
    if isinstance(value, ToolFailed):
        return 'tool-failed'
    return getattr(value, 'kind', getattr(value, 'part_kind', None))


DeferredToolCallResult: TypeAlias = Annotated[
    Annotated[ToolReturn, Tag('tool-return')]
    | Annotated[ModelRetry, Tag('model-retry')]
    | Annotated[ToolFailed, Tag('tool-failed')]
    | Annotated[RetryPromptPart, Tag('retry-prompt')],
    Discriminator(_call_result_kind),
]
"""The answer to an external call that is more than its value: a `ToolReturn` (a value with content for the model
and metadata), a `ModelRetry`, a `ToolFailed` (the external call failed: the model gets a failed tool return) or a
`RetryPromptPart`; these come back as themselves from stored results."""

DeferredToolResult: TypeAlias = DeferredToolApprovalResult | DeferredToolCallResult | Any
"""The answer to any deferred call: an approval, a denial, a retry for the model, or an external result."""


@dataclass(kw_only=True)
class DeferredToolRequests:
    """The tool calls a run ended on: use it as (one of) the agent's output types."""

    calls: list[ToolCallPart] = field(default_factory=list)
    """Calls of external tools (or tools that raised `CallDeferred`): their results come from outside."""
    approvals: list[ToolCallPart] = field(default_factory=list)
    """Calls waiting for approval (`requires_approval=True`, or the tool raised `ApprovalRequired`)."""
    metadata: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Metadata given by `CallDeferred` / `ApprovalRequired`, by tool call id."""

    def build_results(
        self,
        *,
        approvals: dict[str, bool | ToolApproved | ToolDenied] | None = None,
        calls: dict[str, Any] | None = None,
        metadata: dict[str, dict[str, Any]] | None = None,
        approve_all: bool = False,
    ) -> DeferredToolResults:
        """The `DeferredToolResults` answering these requests (`approve_all` approves every call not listed).

        Raises:
            ValueError: an id is not one of these requests' (of the matching kind).
        """
        approvals = dict(approvals or {})
        calls = dict(calls or {})
        approval_ids = {c.tool_call_id for c in self.approvals}
        if extra := set(approvals) - approval_ids:
            raise ValueError(
                f'`approvals` contains tool call IDs not in this `DeferredToolRequests.approvals`: {sorted(extra)}'
            )
        if extra := set(calls) - {c.tool_call_id for c in self.calls}:
            raise ValueError(
                f'`calls` contains tool call IDs not in this `DeferredToolRequests.calls`: {sorted(extra)}'
            )
        if approve_all:
            for call_id in approval_ids - set(approvals):
                approvals[call_id] = ToolApproved()
        return DeferredToolResults(approvals=approvals, calls=calls, metadata=metadata or {})

    def remaining(self, results: DeferredToolResults) -> DeferredToolRequests | None:
        """The requests `results` leaves unanswered, or `None` when it answers them all."""
        answered = set(results.approvals) | set(results.calls)
        rest = DeferredToolRequests(
            calls=[c for c in self.calls if c.tool_call_id not in answered],
            approvals=[c for c in self.approvals if c.tool_call_id not in answered],
            metadata={k: v for k, v in self.metadata.items() if k not in answered},
        )
        return rest if rest.calls or rest.approvals else None


@dataclass(kw_only=True)
class DeferredToolResults:
    """The answers to a run's `DeferredToolRequests`, by tool call id, for `run(deferred_tool_results=...)`."""

    calls: dict[str, DeferredToolCallResult | Any] = field(default_factory=dict)
    """External results: the tool's return value, or a `ModelRetry` / `RetryPromptPart` for the model."""
    approvals: dict[str, bool | ToolApproved | ToolDenied] = field(default_factory=dict)
    """Approvals: `True` / `ToolApproved(...)` runs the tool, `False` / `ToolDenied(...)` answers the model."""
    metadata: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Data for the tool calls, given to the tools as `ctx.tool_call_metadata`, by tool call id."""

    def update(self, other: DeferredToolResults) -> None:
        """Add `other`'s answers (its own win on the same ids)."""
        self.approvals.update(other.approvals)
        self.calls.update(other.calls)
        self.metadata.update(other.metadata)

    def to_tool_call_results(self) -> dict[str, DeferredToolResult]:
        """Every answer by tool call id, with `True`/`False` approvals as `ToolApproved()` / `ToolDenied()`."""
        results: dict[str, DeferredToolResult] = {}
        for call_id, approval in self.approvals.items():
            if approval is True:
                approval = ToolApproved()
            elif approval is False:
                approval = ToolDenied()
            results[call_id] = approval
        results.update(self.calls)
        return results
