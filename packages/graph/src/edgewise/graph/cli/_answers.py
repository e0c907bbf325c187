"""`edgewise runs resume --approve/--deny`: the answers an agent run waiting for approval resumes with.

An agent run stopped on tool calls that need approval is stored waiting. What it waits for, the answers' form
and their check against the calls it waits for come from the agent package's stored-runs contract (see
`_agent_runs`), the same check `agent.resume` runs, so that the command refuses what Python refuses.
"""

from __future__ import annotations as _annotations

from dataclasses import dataclass, field
from typing import Any

from ..persistence.raw import RawSnapshot
from ._agent_runs import Waiting, stored_runs_contract, waiting
from ._common import CommandError

__all__ = ('Answers',)


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
                or a call twice; a call waiting is left unanswered; answers are given to a run that waits for none.
        """
        waits = waiting(last, held=held)
        if not self.approve and not self.deny:
            if waits is None:
                return None
            raise CommandError(self._waiting_error(waits, run_id, resume_command))
        contract = stored_runs_contract()
        if contract is None:
            raise CommandError(
                '--approve and --deny answer the tool calls of an agent run, and no agent package (edgewise-agent) '
                'is installed to read it.'
            )
        answers = contract.build_answers(approve=self.approve, deny=self.deny, deny_message=self.deny_message)
        if held:
            return answers
        if self.deny_message is not None and not self.deny:
            raise CommandError('--deny-message is what the model is told of the calls given with --deny: give those.')
        if twice := sorted(set(self.approve) & set(self.deny)):
            raise CommandError(f'Tool call {twice[0]} is both approved and denied: give it once. Nothing was changed.')
        try:
            contract.check_answers(run_id, waits, approvals=[*self.approve, *self.deny])
        except contract.AnswersRefused as e:
            raise CommandError(self._refused(e, run_id, resume_command)) from None
        return answers

    @staticmethod
    def _refused(error: Exception, run_id: str, resume_command: str) -> str:
        reason = getattr(error, 'reason', None)
        waits: Waiting | None = getattr(error, 'waiting', None)
        if reason == 'not waiting' or waits is None:
            return (
                f'Run {run_id} is not waiting for approval: --approve and --deny answer the tool calls of an agent '
                'run stored waiting for them (`edgewise runs show` says when a run waits). Nothing was changed.'
            )
        results = waits.ids('result')
        call_id = getattr(error, 'call_id', None)
        if reason == 'wrong kind' or (reason == 'unanswered call' and call_id in results):
            return (
                f'Run {run_id} waits for the result of tool call {call_id}, which is given in Python: '
                "`agent.resume(persistence, deferred_tool_results={'calls': {CALL_ID: result}})`. Nothing was changed."
            )
        if reason == 'unanswered call':
            return (
                f'Run {run_id} waits for approval of tool calls {", ".join(waits.ids("approval"))}: answer each of '
                f'them (with --approve or --deny; {call_id} is not answered). Nothing was changed.'
            )
        return str(error)

    @staticmethod
    def _waiting_error(waits: Waiting, run_id: str, resume_command: str) -> str:
        approvals, results = waits.ids('approval'), waits.ids('result')
        lines = [f'Run {run_id} is waiting for {waits.what} of tool calls {", ".join([*approvals, *results])}.']
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
