"""Capabilities: history processors (`ProcessHistory`), hooks of `AbstractCapability`, and instrumentation
(`Agent(instrument=...)`, `Agent.instrument_all`, `Instrumentation`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from logfire.testing import CaptureLogfire

from edgewise.agent import Agent, RunContext, UserError, capture_run_messages
from edgewise.agent.capabilities import (
    AbstractCapability,
    HistoryProcessor,
    Instrumentation,
    ModelRequestContext,
    ProcessHistory,
)
from edgewise.agent.capabilities.process_history import takes_run_context
from edgewise.agent.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    UserPromptPart,
)
from edgewise.agent.models.instrumented import InstrumentationSettings
from edgewise.agent.settings import ModelSettings

from ._helpers import RUN_ID, Recorder

pytestmark = pytest.mark.anyio


HISTORY: list[ModelMessage] = [
    ModelRequest(parts=[UserPromptPart('old question')]),
    ModelResponse(parts=[TextPart('old answer')]),
]


def _prompts(messages: list[ModelMessage]) -> list[str]:
    return [str(p.content) for m in messages for p in m.parts if isinstance(p, UserPromptPart | SystemPromptPart)]


async def test_a_history_processor_changes_what_the_model_sees_and_the_runs_history() -> None:
    recorder = Recorder()

    def keep_last(messages: list[ModelMessage]) -> list[ModelMessage]:
        return messages[-1:]

    agent = Agent(recorder.model, capabilities=[ProcessHistory(keep_last)])
    with capture_run_messages() as captured:
        result = await agent.run('new question', message_history=HISTORY)

    assert _prompts(recorder.received[0]) == ['new question']
    assert captured == result.all_messages()
    assert len(result.all_messages()) == 2
    assert result.new_messages() == result.all_messages()


async def test_processors_run_in_order_sync_or_async_with_or_without_the_context() -> None:
    recorder = Recorder()

    def tag(messages: list[ModelMessage]) -> list[ModelMessage]:
        return [*messages[:-1], ModelRequest(parts=[UserPromptPart('[1] ' + _prompts(messages)[-1])])]

    async def tag_with_deps(ctx: RunContext[str], messages: list[ModelMessage]) -> list[ModelMessage]:
        return [*messages[:-1], ModelRequest(parts=[UserPromptPart(f'[{ctx.deps}] ' + _prompts(messages)[-1])])]

    class Counter:
        calls = 0

        def __call__(self, messages: list[ModelMessage]) -> list[ModelMessage]:
            self.calls += 1
            return messages

    counter = Counter()
    agent: Agent[str, str] = Agent(
        recorder.model,
        deps_type=str,
        capabilities=[ProcessHistory(tag), ProcessHistory(tag_with_deps), ProcessHistory(counter)],
    )
    result = await agent.run('question', deps='2')

    assert _prompts(recorder.received[0]) == ['[2] [1] question']
    assert counter.calls == 1
    first = result.all_messages()[0]
    assert isinstance(first, ModelRequest)
    prompt = first.parts[0]
    assert isinstance(prompt, UserPromptPart)
    assert first == ModelRequest(
        parts=[UserPromptPart('[2] [1] question', timestamp=prompt.timestamp)],
        timestamp=first.timestamp,
        run_id=RUN_ID,
        conversation_id=result.conversation_id,
    )


async def test_adjacent_requests_from_a_processor_are_merged_when_sent_not_in_the_history() -> None:
    recorder = Recorder()

    def add_summary(messages: list[ModelMessage]) -> list[ModelMessage]:
        return [*messages, ModelRequest(parts=[SystemPromptPart('summary')])]

    result = await Agent(recorder.model, capabilities=[ProcessHistory(add_summary)]).run('q', message_history=HISTORY)

    sent = recorder.received[0]
    assert [type(m).__name__ for m in sent] == ['ModelRequest', 'ModelResponse', 'ModelRequest']
    assert _prompts(sent) == ['old question', 'q', 'summary']
    assert [type(m).__name__ for m in result.all_messages()] == [
        'ModelRequest', 'ModelResponse', 'ModelRequest', 'ModelRequest', 'ModelResponse'
    ]  # fmt: skip
    assert result.new_messages() == result.all_messages()[2:]


async def test_a_history_given_with_adjacent_responses_is_sent_merged() -> None:
    recorder = Recorder()
    history: list[ModelMessage] = [
        ModelRequest(parts=[UserPromptPart('a')]),
        ModelResponse(parts=[TextPart('b')]),
        ModelResponse(parts=[TextPart('c')]),
    ]

    await Agent(recorder.model).run('d', message_history=history)

    assert [len(m.parts) for m in recorder.received[0]] == [1, 2, 1]


async def test_a_processed_history_must_end_with_a_request_and_not_be_empty() -> None:
    empty = Agent(Recorder().model, capabilities=[ProcessHistory(lambda messages: [])])
    ending_in_response = Agent(Recorder().model, capabilities=[ProcessHistory(lambda messages: HISTORY)])

    with pytest.raises(UserError, match=r'Processed history cannot be empty\.'):
        await empty.run('q')
    with pytest.raises(UserError, match=r'Processed history must end with a `ModelRequest`\.'):
        await ending_in_response.run('q')


async def test_resending_the_last_request_of_the_history_keeps_it_out_of_new_messages() -> None:
    def prepend(messages: list[ModelMessage]) -> list[ModelMessage]:
        return [ModelRequest(parts=[SystemPromptPart('summary')]), *messages]

    history: list[ModelMessage] = [ModelRequest(parts=[UserPromptPart('pending')])]
    result = await Agent(Recorder().model, capabilities=[ProcessHistory(prepend)]).run(message_history=history)

    assert [type(m).__name__ for m in result.all_messages()] == ['ModelRequest', 'ModelRequest', 'ModelResponse']
    assert result.new_messages() == result.all_messages()[-1:]


async def test_the_deprecated_spellings_of_history_processors_still_work() -> None:
    recorder = Recorder()
    with pytest.warns(DeprecationWarning, match='`HistoryProcessor` is deprecated'):
        capability = HistoryProcessor(lambda messages: messages[-1:])
    with pytest.warns(DeprecationWarning, match=r'`Agent\(history_processors=...\)` is deprecated'):
        agent = Agent(recorder.model, history_processors=[lambda messages: messages[-1:]])

    await agent.run('q', message_history=HISTORY)
    await Agent(recorder.model, capabilities=[capability]).run('q', message_history=HISTORY)

    assert isinstance(capability, ProcessHistory)
    assert len(agent.history_processors) == 1
    assert [_prompts(sent) for sent in recorder.received] == [['q'], ['q']]


def test_a_processor_takes_the_run_context_when_its_first_parameter_says_so() -> None:
    def untyped(messages):
        return messages  # pragma: no cover

    def typed(ctx: RunContext[None], messages: list[ModelMessage]) -> list[ModelMessage]:
        return messages  # pragma: no cover

    def unresolvable(ctx: RunContext[Missing], messages: list[ModelMessage]) -> list[ModelMessage]:  # type: ignore[name-defined]  # noqa: F821
        return messages  # pragma: no cover

    def no_parameters() -> list[ModelMessage]:
        return []  # pragma: no cover

    assert [takes_run_context(f) for f in (untyped, typed, no_parameters, len)] == [False, True, False, False]
    # An annotation that does not resolve is an error, not a guess at how to call the processor (pydantic-ai 2.x).
    with pytest.raises(UserError, match=r"annotations of 'unresolvable': name 'Missing' is not defined\."):
        takes_run_context(unresolvable)


# -- hooks of AbstractCapability ------------------------------------------------------------------------------


class Polite(AbstractCapability[Any]):
    def get_instructions(self) -> Any:
        return 'Be polite.'

    def get_model_settings(self) -> Any:
        return ModelSettings(temperature=0.0, seed=3)


class Quiet(AbstractCapability[Any]):
    async def before_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        request_context.model_settings = {**(request_context.model_settings or {}), 'max_tokens': ctx.run_step}
        return request_context


async def test_capabilities_add_instructions_and_settings_and_can_change_a_request() -> None:
    recorder = Recorder()
    agent = Agent(recorder.model, instructions='Hi.', model_settings=ModelSettings(temperature=1.0))

    result = await agent.run('q', capabilities=[Polite(), Quiet()])
    plain = await agent.run('q')

    assert isinstance(first := result.all_messages()[0], ModelRequest)
    assert first.instructions == 'Hi.\nBe polite.'
    assert recorder.settings == [{'temperature': 1.0, 'seed': 3, 'max_tokens': 1}, {'temperature': 1.0}]
    assert isinstance(plain_first := plain.all_messages()[0], ModelRequest)
    assert plain_first.instructions == 'Hi.'
    assert not Polite().has_request_hook()
    assert Quiet().has_request_hook()


async def test_the_base_capability_changes_nothing() -> None:
    base: AbstractCapability[Any] = AbstractCapability()
    assert (base.get_instructions(), base.get_model_settings()) == (None, None)
    recorder = Recorder()
    context = ModelRequestContext(model=recorder.model, messages=[], model_settings=None, model_request_parameters=None)  # type: ignore[arg-type]
    assert await base.before_model_request(None, context) is context  # type: ignore[arg-type]


# -- instrumentation ------------------------------------------------------------------------------------------


@pytest.fixture
def instrument_default() -> Iterator[None]:
    yield
    Agent.instrument_all(True)


def _span_names(capfire: CaptureLogfire) -> list[str]:
    return [s['name'] for s in capfire.exporter.exported_spans_as_dict()]


async def test_an_agent_instrumented_off_makes_no_spans(capfire: CaptureLogfire) -> None:
    with pytest.warns(DeprecationWarning, match=r'`Agent\(instrument=...\)` is deprecated'):
        agent = Agent(Recorder().model, instrument=False)

    await agent.run('q')

    assert _span_names(capfire) == []
    assert agent.instrument is False


async def test_instrument_all_sets_the_default_that_agents_and_capabilities_override(
    capfire: CaptureLogfire, instrument_default: None
) -> None:
    Agent.instrument_all(False)
    quiet = Agent(Recorder().model)
    traced = Agent(Recorder().model, capabilities=[Instrumentation(InstrumentationSettings(include_content=False))])
    own = Agent(Recorder().model)
    own.instrument = InstrumentationSettings()

    await quiet.run('q')
    assert _span_names(capfire) == []
    await traced.run('q')
    await own.run('q')

    assert _span_names(capfire).count('agent run') == 2
    assert repr(InstrumentationSettings()) == 'InstrumentationSettings(include_content=True, version=5)'
