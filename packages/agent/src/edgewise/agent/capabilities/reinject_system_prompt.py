"""`ReinjectSystemPrompt`: the agent's system prompt put back at the head of a history that lost it."""

from __future__ import annotations as _annotations

from dataclasses import dataclass, replace

from ..messages import ModelMessage, ModelRequest, SystemPromptPart
from ..models import ModelRequestContext
from ..tools import AgentDepsT, RunContext
from .abstract import AbstractCapability

__all__ = ('ReinjectSystemPrompt',)


@dataclass
class ReinjectSystemPrompt(AbstractCapability[AgentDepsT]):
    """Before every model request, make sure the agent's `system_prompt` heads the first request of the history.

    For histories rebuilt from a store that drops system prompts (a UI, a database, a compaction step): a run
    given such a `message_history` would otherwise send no system prompt at all, as the agent adds its system
    prompts only to a run's first request. By default a history holding any `SystemPromptPart` is left alone (its
    prompts stand); with `replace_existing=True` every `SystemPromptPart` of the history is dropped first (a request
    left empty goes too) and the agent's own are put in their place: for histories from an untrusted client.
    The run's stored history gets the same change.
    """

    replace_existing: bool = False
    """Drop the history's system prompts and put the agent's in their place; `False`: a history with any system
    prompt is left alone."""

    async def before_model_request(
        self, ctx: RunContext[AgentDepsT], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        """The request, its history headed by the agent's system prompts where they were missing."""
        messages = request_context.messages
        if self.replace_existing:
            messages[:] = _without_system_prompts(messages)
        elif any(_system_prompts(message) for message in messages):
            return request_context
        if ctx.agent is None:  # a model request outside an agent run: no agent to take prompts from
            return request_context
        parts: list[SystemPromptPart] = await ctx.agent.system_prompt_parts(
            deps=ctx.deps, model=ctx.model, message_history=messages, prompt=ctx.prompt, usage=ctx.usage,
            model_settings=ctx.model_settings,
        )  # fmt: skip
        if parts:
            for index, message in enumerate(messages):
                if isinstance(message, ModelRequest):
                    messages[index] = replace(message, parts=[*parts, *message.parts])
                    break
        return request_context


def _system_prompts(message: ModelMessage) -> list[SystemPromptPart]:
    if not isinstance(message, ModelRequest):
        return []
    return [part for part in message.parts if isinstance(part, SystemPromptPart)]


def _without_system_prompts(messages: list[ModelMessage]) -> list[ModelMessage]:
    kept: list[ModelMessage] = []
    for message in messages:
        if isinstance(message, ModelRequest) and _system_prompts(message):
            parts = [part for part in message.parts if not isinstance(part, SystemPromptPart)]
            if not parts:
                continue
            message = replace(message, parts=parts)
        kept.append(message)
    return kept
