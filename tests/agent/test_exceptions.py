"""The exception tree: one root, leaves also subclass the closest builtin."""

from __future__ import annotations

from edgewise.agent.exceptions import (
    AgentError,
    AgentRunError,
    ModelRetry,
    UnexpectedModelBehavior,
    UsageLimitExceeded,
    UserError,
)


def test_every_error_has_the_one_root_and_a_builtin_base() -> None:
    assert issubclass(ModelRetry, AgentError)
    assert issubclass(UserError, AgentError)
    assert issubclass(UserError, RuntimeError)
    assert issubclass(AgentRunError, AgentError)
    assert issubclass(AgentRunError, RuntimeError)
    assert issubclass(UnexpectedModelBehavior, AgentRunError)
    assert issubclass(UsageLimitExceeded, AgentRunError)


def test_messages_and_bodies() -> None:
    assert ModelRetry('again').message == 'again'
    assert UserError('wrong').message == 'wrong'
    assert str(UnexpectedModelBehavior('odd')) == 'odd'
    assert str(UnexpectedModelBehavior('odd', body='{"x": 1}')) == 'odd, body:\n{"x": 1}'
    assert UsageLimitExceeded('over').messages == []
