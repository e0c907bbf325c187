"""GitHub Copilot: `GitHubCopilotModel`, a model of a Copilot subscription over its Chat Completions API.

The wire format is `OpenAIChatModel`'s; what Copilot does differently (where Claude and Gemini put their reasoning,
`max_completion_tokens`, the sampling settings the newest Claude models refuse) is in the profile that
`GitHubCopilotProvider` gives each model id. Copilot's answers leave out some fields of OpenAI's envelope (`object`,
a choice's `index`), which the Chat Completions reader does not need.
"""

from __future__ import annotations as _annotations

from typing import Any, Literal

from ..profiles import ModelProfileSpec
from ..providers import Provider
from ..settings import ModelSettings
from .openai import OpenAIChatModel

__all__ = ('GitHubCopilotModel', 'GitHubCopilotModelName')

GitHubCopilotModelName = str
"""The id of a model on Copilot (`'claude-haiku-4.5'`, `'gpt-5.4'`, ...): any string, since which ids a subscription
reaches differs by plan and changes often (`GET https://api.githubcopilot.com/models` lists them)."""


class GitHubCopilotModel(OpenAIChatModel):
    """A model of a GitHub Copilot subscription (`POST {base_url}/chat/completions`), streamed or not.

    `GitHubCopilotModel('claude-haiku-4.5')` reads the token from `GITHUB_COPILOT_API_KEY`. The id goes out as given;
    its family (from its prefix: `claude-`, `gpt-`, `gemini-`, ...) picks its profile.
    """

    _default_provider = 'github-copilot'

    def __init__(
        self,
        model_name: GitHubCopilotModelName,
        *,
        provider: Literal['github-copilot'] | Provider[Any] = 'github-copilot',
        profile: ModelProfileSpec | None = None,
        settings: ModelSettings | None = None,
    ) -> None:
        """Configure the model.

        Args:
            model_name: The model's id on Copilot, e.g. `'claude-haiku-4.5'`.
            provider: The provider or its name (`'github-copilot'`, or a `GitHubCopilotProvider` of your own).
            profile: The model's profile (or a function of the name giving it); the provider's by default.
            settings: Default settings of this model's requests.
        """
        super().__init__(model_name, provider=provider, profile=profile, settings=settings)
