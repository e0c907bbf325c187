"""`CompactionPart`: a summary standing in for the earlier part of a conversation, made by the provider
(Anthropic's context compaction, OpenAI's Responses compaction) and sent back to it on later requests.

The functions that read a history by its compaction boundaries (`post_compaction_window`) live in
`_messages.history`, above the message model that holds this part.
"""

from __future__ import annotations as _annotations

from dataclasses import KW_ONLY, dataclass
from typing import Any, Literal

__all__ = ('CompactionPart', 'STANDING_PROMPT_PLANTED_KEY')

STANDING_PROMPT_PLANTED_KEY = 'pydantic_ai_standing_prompt_planted'
"""The `CompactionPart.provider_details` key set on a compaction made by an explicit compaction request whose input
held the run's system prompt (pydantic-ai's key, so histories of either library read the same): only such a part
is trusted to carry the system prompt on, any other gets it sent again after the boundary."""


@dataclass(repr=False)
class CompactionPart:
    """A compaction of the conversation before it: the provider's summary, sent back only to that provider.

    Anthropic's compaction is readable text (`content`); OpenAI's is encrypted, `content` is `None` and the data
    is in `provider_details['encrypted_content']`. A history is read from its latest compaction part on: the
    parts and messages before it are not sent again to the provider that made it.
    """

    content: str | None = None
    """The summary's text, when the provider gives a readable one (Anthropic); `None` for OpenAI's."""
    _: KW_ONLY
    id: str | None = None
    """The provider's id of the compaction item (requires `provider_name`)."""
    provider_name: str | None = None
    """The provider that compacted; the part is sent back to that provider only."""
    provider_details: dict[str, Any] | None = None
    """Provider-specific data: for OpenAI, the `encrypted_content` of its compaction item (requires
    `provider_name`)."""
    part_kind: Literal['compaction'] = 'compaction'
    """Tag of this part kind in serialized messages."""

    def has_content(self) -> bool:
        """Whether there is a readable summary."""
        return bool(self.content)

    def __repr__(self) -> str:
        names = ('content', 'id', 'provider_name', 'provider_details')
        shown = ', '.join(f'{n}={v!r}' for n in names if (v := getattr(self, n)) is not None)
        return f'CompactionPart({shown})'
