"""Output validation with retries: a validator rejects an answer and the model is asked again.

Run it with `python -m examples.agent.output_validation`.
"""

from __future__ import annotations

from edgewise.agent import Agent, ModelRetry, RunContext
from edgewise.agent.messages import ModelMessage, ModelResponse, RetryPromptPart, TextPart
from edgewise.agent.models.function import AgentInfo, FunctionModel

DRAFTS = ['SELECT * FROM users', 'SELECT id, name FROM users WHERE active']


def scripted_llm(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Write a first draft, then a better one after each retry prompt."""
    retries = sum(isinstance(p, RetryPromptPart) for m in messages for p in m.parts)
    return ModelResponse(parts=[TextPart(DRAFTS[min(retries, len(DRAFTS) - 1)])])


agent = Agent(FunctionModel(scripted_llm), retries=2, instructions='Write one SQL query.')


@agent.output_validator
def no_select_star(ctx: RunContext[None], query: str) -> str:
    """Reject `SELECT *`: the model sees the message and tries again (at most `retries` times)."""
    if '*' in query:
        raise ModelRetry('Name the columns instead of using `SELECT *`.')
    return query


def main() -> None:
    """Ask for a query and show the retry the validator caused."""
    result = agent.run_sync('Which active users are there?')
    print(f'query: {result.output}')
    for message in result.all_messages():
        for part in message.parts:
            if isinstance(part, RetryPromptPart):
                print(f'retry prompt: {part.model_response()!r}')
    print(f'requests: {result.usage.requests}')


if __name__ == '__main__':
    main()
