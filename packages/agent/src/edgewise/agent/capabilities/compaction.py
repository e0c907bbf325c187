"""Provider-side compaction of long conversations: `AnthropicCompaction` and `OpenAICompaction` (pydantic-ai 2.x;
its import paths `edgewise.agent.models.anthropic` and `edgewise.agent.models.openai` give them too).

The provider summarizes the conversation into a `CompactionPart` kept in the history; later requests send that part
and what follows it instead of the history before it (the mapping of each API does this:
`edgewise.agent.models._compaction_mapping`).
"""

from __future__ import annotations as _annotations

from collections.abc import Callable
from typing import Any, cast

from ..exceptions import UserError
from ..messages import ModelMessage
from ..models import ModelRequestContext
from ..models._compaction_mapping import ANTHROPIC_COMPACT_EDIT_TYPE
from ..models.openai import OpenAIResponsesModel
from ..models.wrapper import WrapperModel
from ..settings import ModelSettings
from ..tools import AgentDepsT, RunContext
from .abstract import AbstractCapability

__all__ = ('AnthropicCompaction', 'OpenAICompaction')


class AnthropicCompaction(AbstractCapability[AgentDepsT]):
    """Anthropic compacts the conversation on its side once a request's input passes `token_threshold` tokens
    (the `context_management` of the Messages API); the summary comes back as a `CompactionPart`.

    ```python
    from edgewise.agent import Agent
    from edgewise.agent.models.anthropic import AnthropicCompaction

    agent = Agent('anthropic:claude-sonnet-4-5', capabilities=[AnthropicCompaction(token_threshold=100_000)])
    ```
    """

    def __init__(
        self, *, token_threshold: int = 150_000, instructions: str | None = None, pause_after_compaction: bool = False
    ) -> None:
        """Configure the compaction.

        Args:
            token_threshold: Compact when the input passes this many tokens (Anthropic's minimum is 50,000).
            instructions: How the summary is to be written, instead of Anthropic's default prompt.
            pause_after_compaction: End the response after the compaction (`stop_reason='compaction'`); the run
                then takes the summary as the response's text.
        """
        self.token_threshold = token_threshold
        self.instructions = instructions
        self.pause_after_compaction = pause_after_compaction

    def get_model_settings(self) -> Callable[[RunContext[AgentDepsT]], ModelSettings]:
        """The `anthropic_context_management` setting with this compaction's edit appended to the edits already
        set (the other fields kept)."""
        edit: dict[str, Any] = {
            'type': ANTHROPIC_COMPACT_EDIT_TYPE,
            'trigger': {'type': 'input_tokens', 'value': self.token_threshold},
        }
        if self.pause_after_compaction:
            edit['pause_after_compaction'] = True
        if self.instructions is not None:
            edit['instructions'] = self.instructions

        def settings(ctx: RunContext[AgentDepsT]) -> ModelSettings:
            given = cast(dict[str, Any], ctx.model_settings or {}).get('anthropic_context_management')
            management: dict[str, Any] = dict(given) if isinstance(given, dict) else {}
            management['edits'] = [*management.get('edits', []), edit]
            return cast(ModelSettings, {'anthropic_context_management': management})

        return settings

    @classmethod
    def get_serialization_name(cls) -> str | None:
        """`'AnthropicCompaction'`."""
        return 'AnthropicCompaction'

    def __repr__(self) -> str:
        return f'AnthropicCompaction(token_threshold={self.token_threshold!r})'


class OpenAICompaction(AbstractCapability[AgentDepsT]):
    """Compaction by OpenAI's Responses API, in one of two modes.

    - Stateful (the default): OpenAI compacts on its side when the input passes `token_threshold` tokens (or its own
      default), through the request's `context_management`; the compaction item comes back with the response.
    - Stateless (`stateless=True`, implied by `message_count_threshold` or `trigger`): before a request whose
      history meets the condition, the history (all but the new request) is sent to `POST /responses/compact`,
      and the request goes out with the resulting compaction in its place. For zero data retention, or
      `openai_store=False`.

    ```python
    from edgewise.agent import Agent
    from edgewise.agent.models.openai import OpenAICompaction

    agent = Agent('openai:gpt-5', capabilities=[OpenAICompaction(message_count_threshold=20)])
    ```
    """

    def __init__(
        self,
        *,
        stateless: bool | None = None,
        token_threshold: int | None = None,
        message_count_threshold: int | None = None,
        trigger: Callable[[list[ModelMessage]], bool] | None = None,
    ) -> None:
        """Configure the compaction.

        Args:
            stateless: The mode; `None` infers it (stateless when `message_count_threshold` or `trigger` is given).
            token_threshold: Stateful only: compact past this many input tokens (`compact_threshold`).
            message_count_threshold: Stateless only: compact when the history has more messages than this.
            trigger: Stateless only: compact when this function of the history says so (before
                `message_count_threshold`).

        Raises:
            UserError: an option of one mode is given for the other, or stateless mode has no condition.
        """
        stateless_options = message_count_threshold is not None or trigger is not None
        if stateless is None:
            stateless = stateless_options
        if stateless and token_threshold is not None:
            raise UserError(
                '`token_threshold` is only valid for stateful compaction (`stateless=False`). '
                'For stateless `/compact` endpoint compaction, use `message_count_threshold` or `trigger`.'
            )
        if stateless and not stateless_options:
            raise UserError(
                '`stateless=True` requires `message_count_threshold` or `trigger` '
                'to determine when to invoke the `/compact` endpoint.'
            )
        if not stateless and stateless_options:
            raise UserError(
                '`message_count_threshold` and `trigger` are only valid for stateless compaction '
                '(`stateless=True`). For stateful server-side compaction, use `token_threshold` '
                '(or omit it to use the OpenAI-managed default).'
            )
        self.stateless = stateless
        self.token_threshold = token_threshold
        self.message_count_threshold = message_count_threshold
        self.trigger = trigger

    def get_model_settings(self) -> Callable[[RunContext[AgentDepsT]], ModelSettings] | None:
        """Stateful mode: the `openai_context_management` setting (unless the settings already have one)."""
        if self.stateless:
            return None
        edit: dict[str, Any] = {'type': 'compaction'}
        if self.token_threshold is not None:
            edit['compact_threshold'] = self.token_threshold

        def settings(ctx: RunContext[AgentDepsT]) -> ModelSettings:
            # OpenAI takes one compaction entry: one the user set wins.
            if cast(dict[str, Any], ctx.model_settings or {}).get('openai_context_management'):
                return ModelSettings()
            return cast(ModelSettings, {'openai_context_management': [edit]})

        return settings

    def _should_compact(self, messages: list[ModelMessage]) -> bool:
        if not self.stateless:
            return False
        if self.trigger is not None:
            return self.trigger(messages)
        return self.message_count_threshold is not None and len(messages) > self.message_count_threshold

    async def before_model_request(
        self, ctx: RunContext[AgentDepsT], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        """Stateless mode, when the condition holds: the history before the new request replaced by its compaction.

        Raises:
            UserError: the model is not an `OpenAIResponsesModel` (also behind wrappers).
        """
        messages = request_context.messages
        if not self._should_compact(messages):
            return request_context
        model = request_context.model
        while isinstance(model, WrapperModel):
            model = model.wrapped
        if not isinstance(model, OpenAIResponsesModel):
            raise UserError(
                f'OpenAICompaction requires OpenAIResponsesModel, got {type(model).__name__}. '
                'Use the provider-specific compaction capability for your model.'
            )
        if len(messages) < 2:  # nothing before the new request
            return request_context
        history = ModelRequestContext(
            model=model,
            messages=messages[:-1],
            model_settings=request_context.model_settings,
            model_request_parameters=request_context.model_request_parameters,
        )
        compacted = await model.compact_messages(history)
        request_context.messages = [compacted, messages[-1]]
        return request_context

    @classmethod
    def get_serialization_name(cls) -> str | None:
        """`'OpenAICompaction'`."""
        return 'OpenAICompaction'

    def __repr__(self) -> str:
        mode = 'stateless' if self.stateless else 'stateful'
        return f'OpenAICompaction({mode})'
