"""`PendingMessage`, `EnqueueContent` and `PendingMessagePriority` under the private module name pydantic-ai gives
them (code importing them from there keeps working); they live in `_message_flow.pending`."""

from ._message_flow.pending import EnqueueContent, PendingMessage, PendingMessagePriority, take_pending

__all__ = ('EnqueueContent', 'PendingMessage', 'PendingMessagePriority', 'take_pending')
