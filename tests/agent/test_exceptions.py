"""The exception tree: one root, leaves also subclass the closest builtin; `ModelRetry` outside it."""

from __future__ import annotations

import inspect

from edgewise.agent.exceptions import (
    AgentError,
    AgentRunError,
    ModelRetry,
    UnexpectedModelBehavior,
    UsageLimitExceeded,
    UserError,
)


def test_every_error_has_the_one_root_and_a_builtin_base() -> None:
    assert issubclass(UserError, AgentError)
    assert issubclass(UserError, RuntimeError)
    assert issubclass(AgentRunError, AgentError)
    assert issubclass(AgentRunError, RuntimeError)
    assert issubclass(UnexpectedModelBehavior, AgentRunError)
    assert issubclass(UsageLimitExceeded, AgentRunError)


def test_model_retry_is_a_signal_outside_the_error_tree() -> None:
    # As in pydantic-ai: an `except AgentError` in a tool must not swallow the tool's own request for a retry.
    assert ModelRetry.__mro__ == (ModelRetry, Exception, BaseException, object)


def test_the_message_is_declared_once_on_the_root() -> None:
    for cls in (UserError, AgentRunError, UnexpectedModelBehavior, UsageLimitExceeded):
        assert 'message' not in inspect.get_annotations(cls)
    assert '__init__' not in UserError.__dict__
    assert '__init__' not in AgentRunError.__dict__
    assert AgentRunError('failed').message == 'failed'
    assert str(AgentRunError('failed')) == 'failed'


def test_messages_and_bodies() -> None:
    assert ModelRetry('again').message == 'again'
    assert UserError('wrong').message == 'wrong'
    assert str(UnexpectedModelBehavior('odd')) == 'odd'
    assert str(UnexpectedModelBehavior('odd', body='{"x": 1}')) == 'odd, body:\n{"x": 1}'
    assert UsageLimitExceeded('over').messages == []


def test_the_new_leaves_sit_in_the_tree() -> None:
    from edgewise.agent.exceptions import (
        ConcurrencyLimitExceeded,
        ContentFilterError,
        IncompleteToolCall,
        ToolRetryError,
    )

    assert issubclass(ContentFilterError, UnexpectedModelBehavior)
    assert issubclass(IncompleteToolCall, UnexpectedModelBehavior)
    assert issubclass(ConcurrencyLimitExceeded, AgentRunError)
    assert not issubclass(ToolRetryError, AgentError)  # a signal, like `ModelRetry`
