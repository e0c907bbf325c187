"""The two roots of `edgewise.agent`'s exception tree, apart from `exceptions` so that the modules of its branches
(`model_api`) can build on them; `edgewise.agent.exceptions` is where they are imported from."""

from __future__ import annotations as _annotations


class AgentError(Exception):
    """Root of every exception raised by `edgewise.agent`."""

    message: str
    """What went wrong and, where possible, what to do about it."""

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(message)


class AgentRunError(AgentError, RuntimeError):
    """A run of an agent failed."""

    def __str__(self) -> str:
        return self.message
