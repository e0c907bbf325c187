"""`HistoryScan`: a question asked of a run's growing history before every request, answered by reading each message
once (the history only grows between requests; a hook that rewrites it starts the reading again)."""

from __future__ import annotations as _annotations

from collections.abc import Callable, Sequence
from typing import Any

__all__ = ('HistoryScan',)


class HistoryScan:
    """Whether a history holds a message that `found` picks, remembered across requests.

    Once such a message is seen the answer stays yes; until then only the messages added since the last reading are
    read (and the last one again, with `reread_last`, when a request merged into it can add to it).
    """

    __slots__ = ('scanned', 'seen')

    def __init__(self) -> None:
        self.scanned = 0
        """How many messages from the start are known not to be picked."""
        self.seen = False
        """Whether a picked message was found (the answer stays yes)."""

    def holds(self, messages: Sequence[Any], found: Callable[[Any], bool], *, reread_last: bool = False) -> bool:
        """Whether `messages` hold a message `found` picks, reading only those not read before."""
        if self.seen:
            return True
        count = len(messages)
        start = self.scanned if self.scanned <= count else 0  # shorter than read before: a rewritten history
        for index in range(start, count):
            if found(messages[index]):
                self.seen = True
                return True
        self.scanned = count - 1 if reread_last and count else count
        return False

    def restart(self) -> None:
        """Read the whole history again at the next question (a hook rewrote it: anything may be anywhere)."""
        self.scanned = 0
