"""`edgewise runs resume --approve/--deny`: the answers an agent run waiting for approval resumes with.

An agent run stopped on tool calls that need approval is stored waiting, its next node holding the pending calls
(`requests.approvals`, `requests.calls` in the stored JSON; read here without the agent package). The answers go
to the agent as `deferred_tool_results` in their JSON form, which the agent validates.
"""

from __future__ import annotations as _annotations

from dataclasses import dataclass, field
from typing import Any

from ..persistence.raw import RawNode, RawSnapshot
from ._common import CommandError

__all__ = ('Answers', 'pending_calls', 'waiting_for')


def waiting_for(snapshot: RawSnapshot) -> str | None:
    """What a waiting agent run's next node waits for (`'approval'`, `'tool results'`, ...), else `None`."""
    if snapshot.kind != 'node' or snapshot.status != 'created':
        return None
    value = snapshot.node.fields.get('waiting_for')
    return value if isinstance(value, str) and value else None


def pending_calls(fields: dict[str, Any], key: str) -> list[str]:
    """The ids of the tool calls a waiting agent run's node holds under `requests.<key>` (`approvals`, `calls`)."""
    requests = fields.get('requests')
    calls = requests.get(key) if isinstance(requests, dict) else None
    return [str(c.get('tool_call_id')) for c in calls or () if isinstance(c, dict)]


def _fields(snapshot: RawSnapshot) -> dict[str, Any]:
    return snapshot.node.fields if isinstance(snapshot.node, RawNode) else {}


@dataclass
class Answers:
    """The approvals and denials given on the command line."""

    approve: list[str] = field(default_factory=list)
    """Tool call ids to approve."""
    deny: list[str] = field(default_factory=list)
    """Tool call ids to deny."""
    deny_message: str | None = None
    """What the model is told of a denied call (the agent's default message when `None`)."""

    def for_run(self, last: RawSnapshot, run_id: str, resume_command: str, held: bool) -> dict[str, Any] | None:
        """The answers as the agent's `deferred_tool_results` (JSON form), checked against the calls the run's
        last snapshot holds; `None` when none are given and the run does not wait for any.

        A run `held` by a live process is not checked: resuming it is refused anyway.

        Raises:
            CommandError: the run waits and no answer is given; an answer names a call the run does not wait for,
                or a call twice; answers are given to a run that waits for none.
        """
        waits = waiting_for(last)
        if not self.approve and not self.deny:
            if waits is None:
                return None
            raise CommandError(self._waiting_error(last, run_id, waits, resume_command))
        if held:
            return self._json()
        if self.deny_message is not None and not self.deny:
            raise CommandError('--deny-message is what the model is told of the calls given with --deny: give those.')
        if waits is None:
            raise CommandError(
                f'Run {run_id} is not waiting for approval: --approve and --deny answer the tool calls of an agent '
                'run stored waiting for them (`edgewise runs show` says when a run waits). Nothing was changed.'
            )
        pending = pending_calls(_fields(last), 'approvals')
        if twice := sorted(set(self.approve) & set(self.deny)):
            raise CommandError(f'Tool call {twice[0]} is both approved and denied: give it once. Nothing was changed.')
        if unknown := [i for i in [*self.approve, *self.deny] if i not in pending]:
            raise CommandError(
                f'Run {run_id} waits for no approval of tool call {unknown[0]!r}; the calls waiting for approval are '
                f'{", ".join(pending) or "none"}. Nothing was changed.'
            )
        return self._json()

    def _json(self) -> dict[str, Any]:
        denial: Any = False if self.deny_message is None else {'kind': 'tool-denied', 'message': self.deny_message}
        approvals: dict[str, Any] = dict.fromkeys(self.approve, True)
        approvals.update((i, denial) for i in self.deny)
        return {'approvals': approvals}

    @staticmethod
    def _waiting_error(last: RawSnapshot, run_id: str, waits: str, resume_command: str) -> str:
        approvals = pending_calls(_fields(last), 'approvals')
        results = pending_calls(_fields(last), 'calls')
        lines = [f'Run {run_id} is waiting for {waits} of tool calls {", ".join([*approvals, *results])}.']
        if approvals:
            lines.append(
                f'Answer them with `{resume_command} --approve CALL_ID` or `--deny CALL_ID` (each may be repeated).'
            )
        if results:
            lines.append(
                'Calls waiting for their results are answered in Python: '
                "`agent.resume(persistence, deferred_tool_results={'calls': {CALL_ID: result}})`."
            )
        return ' '.join([*lines, 'Nothing was changed.'])
