"""`OpenAIDecisionsProvider`: pydantic-ai 2.68's deprecated provider for OpenAI's Decisions API.

`OpenAIProvider` serves `OpenAIDecisionsModel` itself (the model brings its own profile and names its responses
`'openai-decisions'`), so this class is only a name kept for code written against it.
"""

from typing_extensions import deprecated

from .._warnings import PydanticAIDeprecationWarning
from ..profiles import ModelProfile
from ..profiles.decision import decision_model_profile
from .openai import OpenAIProvider

__all__ = ('OpenAIDecisionsProvider',)


@deprecated(
    '`OpenAIDecisionsProvider` is deprecated and will be removed in v3: use `OpenAIProvider` with '
    '`OpenAIDecisionsModel`, which takes the same arguments.',
    category=PydanticAIDeprecationWarning,
)
class OpenAIDecisionsProvider(OpenAIProvider):
    """Deprecated: `OpenAIProvider` named `'openai-decisions'`, giving models the Decisions API's profile."""

    @property
    def name(self) -> str:
        """`'openai-decisions'`."""
        return 'openai-decisions'

    @staticmethod
    def model_profile(model_name: str) -> ModelProfile | None:
        """The Decisions API's profile of the model."""
        return decision_model_profile(model_name)
