"""What `edgewise runs` reads of agent runs, through the agent package's public contract for stored runs.

The graph package never imports the agent package. An agent package that stores its runs in graph stores
declares, in the `edgewise.stored_runs` entry point group (under the name `agent`), a module with the functions
below (`edgewise-agent` declares `edgewise.agent.stored_runs`); it is loaded the first time an agent run is read.
`StoredRunsContract` is what this command needs of it, checked by the contract's version and, statically, by the
agent package's tests; without such a package installed, no run reads as an agent run.
"""

from __future__ import annotations as _annotations

from collections.abc import Collection, Iterable, Sequence
from functools import cache
from importlib.metadata import entry_points
from typing import Any, Literal, Protocol, cast

from ..persistence.raw import RawSnapshot
from ._common import CommandError
from ._format import summary

__all__ = (
    'CONTRACT_VERSION',
    'StoredRunsContract',
    'agent_run_lines',
    'is_agent_run',
    'stored_runs_contract',
    'waiting',
    'waiting_lines',
)

CONTRACT_VERSION = 1
"""The version of the stored-runs contract this command reads."""

ENTRY_POINT_GROUP = 'edgewise.stored_runs'
"""The entry point group an agent package declares its contract in (under the name `agent`)."""


class PendingCall(Protocol):
    """A tool call a stored run waits for."""

    @property
    def tool_name(self) -> str: ...
    @property
    def tool_call_id(self) -> str: ...
    @property
    def args(self) -> Any: ...
    @property
    def needs(self) -> Literal['approval', 'result']: ...


class Waiting(Protocol):
    """What a stored run waits for."""

    @property
    def what(self) -> str: ...
    @property
    def calls(self) -> Sequence[PendingCall]: ...
    def ids(self, needs: Literal['approval', 'result']) -> list[str]: ...


class MessagePart(Protocol):
    """One part of a message of a stored run's conversation."""

    @property
    def who(self) -> str: ...
    @property
    def content(self) -> Any: ...
    @property
    def tool_name(self) -> str | None: ...
    @property
    def tool_call_id(self) -> str | None: ...


class StepCall(Protocol):
    """A tool call of the step a stored run stopped in."""

    @property
    def tool_name(self) -> str: ...
    @property
    def tool_call_id(self) -> str: ...
    @property
    def finished(self) -> bool: ...


class Usage(Protocol):
    """What a stored run has used."""

    @property
    def requests(self) -> int: ...
    @property
    def input_tokens(self) -> int: ...
    @property
    def output_tokens(self) -> int: ...
    @property
    def tool_calls(self) -> int: ...


class StoredAgentRun(Protocol):
    """A stored agent run as the contract describes it."""

    @property
    def message_count(self) -> int: ...
    @property
    def parts(self) -> Sequence[MessagePart]: ...
    @property
    def usage(self) -> Usage: ...
    @property
    def step_calls(self) -> Sequence[StepCall]: ...
    @property
    def waiting(self) -> Waiting | None: ...


class StoredRunsContract(Protocol):
    """What `edgewise runs` needs of an agent package's stored-runs contract (version `CONTRACT_VERSION`)."""

    CONTRACT_VERSION: int

    @property
    def AnswersRefused(self) -> type[Exception]: ...

    def waiting(self, snapshot: RawSnapshot, *, held: bool = False) -> Waiting | None: ...

    def describe(self, history: Sequence[RawSnapshot], *, held: bool = False) -> StoredAgentRun | None: ...

    def build_answers(
        self, *, approve: Iterable[str] = (), deny: Iterable[str] = (), deny_message: str | None = None
    ) -> dict[str, Any]: ...

    # `waits` is what the contract's own `waiting` returned (its own class, so typed loosely here).
    def check_answers(
        self, run_id: str | None, waits: Any, *, approvals: Collection[str] = (), calls: Collection[str] = ()
    ) -> None: ...


@cache
def stored_runs_contract() -> StoredRunsContract | None:
    """The installed agent package's contract, or `None` when no agent package declares one.

    Raises:
        CommandError: the installed contract is of another version than this command reads.
    """
    found = [ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name == 'agent']
    if not found:
        return None
    contract = cast(StoredRunsContract, found[0].load())
    version = getattr(contract, 'CONTRACT_VERSION', None)
    if version != CONTRACT_VERSION:
        raise CommandError(
            f'The installed agent package ({found[0].value}) describes stored runs in contract version {version}, '
            f'this edgewise-graph reads version {CONTRACT_VERSION}: install matching versions of edgewise-graph and '
            'edgewise-agent.'
        )
    return contract


def waiting(snapshot: RawSnapshot, *, held: bool = False) -> Waiting | None:
    """What an agent run whose last snapshot is `snapshot` waits for, or `None` (see the contract's `waiting`)."""
    if snapshot.kind != 'node' or snapshot.status not in ('created', 'pending'):
        return None  # not waiting whatever the run is: no need to load the contract
    contract = stored_runs_contract()
    return None if contract is None else contract.waiting(snapshot, held=held)


def is_agent_run(history: Sequence[RawSnapshot]) -> bool:
    """Whether the run of `history` is an agent run (as the installed agent package's contract reads it)."""
    contract = stored_runs_contract()
    return contract is not None and contract.describe(history) is not None


def waiting_lines(waits: Waiting) -> list[str]:
    """One line per pending call: `pay(amount=30) [p1]: needs approval`."""
    what = {'approval': 'needs approval', 'result': 'needs its result'}
    return [
        f'  {call.tool_name}({summary(call.args, 80)}) [{call.tool_call_id}]: {what[call.needs]}'
        for call in waits.calls
    ]


def agent_run_lines(history: list[RawSnapshot]) -> list[str] | None:
    """The lines describing an agent run (conversation, usage, pending tool calls), or `None` for another run."""
    contract = stored_runs_contract()
    run = None if contract is None else contract.describe(history)
    if run is None:
        return None
    lines = [f'Messages ({run.message_count}):']
    lines.extend(f'  {_part(part)}' for part in run.parts)
    usage = run.usage
    lines.append(
        f'Usage: {usage.requests} requests, {usage.input_tokens} input tokens, {usage.output_tokens} output tokens, '
        f'{usage.tool_calls} tool calls'
    )
    if run.step_calls:
        lines.append('Tool calls of the next step:')
        for call in run.step_calls:
            where = 'finished (its result is stored)' if call.finished else 'pending'
            lines.append(f'  {call.tool_name} [{call.tool_call_id}]: {where}')
    return lines


def _part(part: MessagePart) -> str:
    if part.who == 'tool call':
        return f'model calls {part.tool_name}({summary(part.content, 60)}) [{part.tool_call_id}]'
    if part.who == 'tool return':
        return f'{part.tool_name} returned {summary(part.content, 60)} [{part.tool_call_id}]'
    if part.who == 'retry':
        return f'retry: {summary(part.content, 80)}'
    return f'{part.who}: {summary(part.content, 90)}'
