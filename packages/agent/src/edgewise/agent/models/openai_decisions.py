"""`OpenAIDecisionsModel`: OpenAI's Decisions API (`POST /v1/decisions`, `'openai-decisions:gpt-6-luna'`), which runs
a GPT model as a decision model (`edgewise.agent.models.decision`).

A request sends the conversation as the Responses API's input items (`message`, `function_call`,
`function_call_output`; a lone user text as plain text), or the judged `state` as text when `decide` is called without
one, and the questions as a list: a yes/no is a `predicate` (what yes and no mean folded into its instructions), a
pick-one a `choice` of `{value, description}`, a rubric a `score` of `{label, description}` levels. Each answer comes
back under its question's `name`; a `refusal` is a `ContentFilterError`. The call goes through the shared HTTP layer
with the `OpenAIProvider`'s key, retries and OpenAI's error categories.
"""

from __future__ import annotations as _annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, JsonValue, TypeAdapter, ValidationError

from .._messages.framing import TOOL_RESULT_TAG, frame_tags
from ..exceptions import ContentFilterError, UnexpectedModelBehavior, UserError
from ..messages import (
    CachePoint,
    CompactionPart,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    NativeToolCallPart,
    NativeToolReturnPart,
    RetryFeedbackPart,
    RetryPromptPart,
    SystemPromptPart,
    TextContent,
    TextPart,
    ThinkingPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from ..profiles import ModelProfile, ModelProfileSpec, resolve_profile
from ..profiles.decision import decision_model_profile
from ..providers import Provider, infer_provider
from ..settings import ModelSettings
from ..usage import RequestUsage
from . import _http
from ._decision_http import HTTPDecisionModel
from ._decision_protocol import answer_fits
from ._decision_protocol import as_text as _text
from ._error_categories import openai_http_error
from .decision import (
    ChoiceAnswer,
    ChoiceQuestion,
    DecisionAnswer,
    DecisionModelSettings,
    DecisionQuestion,
    DecisionRequest,
    DecisionResponse,
    NoulAnswer,
    NoulCriteria,
    NoulQuestion,
    ScoreAnswer,
)

__all__ = ('OpenAIDecisionsModel', 'OpenAIDecisionsModelName', 'OpenAIDecisionsModelSettings')

OpenAIDecisionsModelName = str | Literal['gpt-6-luna']
"""The model to ask, such as `gpt-6-luna` (the Responses API serves it too)."""


class OpenAIDecisionsModelSettings(DecisionModelSettings, total=False):
    """The settings of an OpenAI Decisions request (no `openai_decisions_`-prefixed ones yet)."""


def _with_meanings(instructions: JsonValue, criteria: NoulCriteria | None) -> JsonValue:
    """A yes/no's instructions with what yes and no mean (a `predicate` has no field for them)."""
    meanings: dict[str, JsonValue] = {}
    if criteria is not None:
        meanings = {k: v for k, v in (('yes', criteria.true), ('no', criteria.false)) if v is not None}
    if not meanings:
        return instructions
    if instructions is None:
        return meanings
    if isinstance(instructions, dict):
        return {**instructions, **meanings}
    return {'question': instructions, **meanings}


def _described(key: str, value: str, meaning: JsonValue) -> dict[str, str]:
    return {key: value} if meaning is None else {key: value, 'description': _text(meaning)}


def _question(name: str, question: DecisionQuestion) -> dict[str, Any]:
    """A protocol question as the API's (`instructions` required: empty where there are none)."""
    if isinstance(question, NoulQuestion):
        instructions = _with_meanings(question.instructions, question.criteria)
        return {'type': 'predicate', 'name': name, 'instructions': '' if instructions is None else _text(instructions)}
    instructions_text = '' if question.instructions is None else _text(question.instructions)
    if isinstance(question, ChoiceQuestion):
        choices = [_described('value', label, meaning) for label, meaning in question.criteria.items()]
        return {'type': 'choice', 'name': name, 'instructions': instructions_text, 'choices': choices}
    levels = [_described('label', str(level), meaning) for level, meaning in enumerate(question.criteria)]
    return {'type': 'score', 'name': name, 'instructions': instructions_text, 'levels': levels}


class _Conversation:
    """A conversation as the Responses API input items the Decisions API reads (text only; no item ids)."""

    def __init__(self) -> None:
        self.items: list[dict[str, Any]] = []

    def read(self, messages: Sequence[ModelMessage]) -> str | list[dict[str, Any]]:
        calls = {
            part.tool_call_id
            for message in messages
            if isinstance(message, ModelResponse)
            for part in message.parts
            if isinstance(part, (ToolCallPart, NativeToolCallPart))
        }
        for message in messages:
            for part in message.parts:
                if isinstance(message, ModelRequest):
                    self._request_part(part, calls)
                else:
                    self._response_part(part, calls)
        if len(self.items) == 1 and self.items[0]['role'] == 'user' and isinstance(self.items[0]['content'], str):
            return str(self.items[0]['content'])  # a lone text prompt goes as plain text
        return self.items

    def _message(self, role: str, content: str) -> None:
        self.items.append({'role': role, 'content': content})

    def _request_part(self, part: Any, calls: set[str]) -> None:
        if isinstance(part, SystemPromptPart):
            self._message('system', part.content)
        elif isinstance(part, UserPromptPart):
            texts: list[str] = []
            for item in [part.content] if isinstance(part.content, str) else part.content:
                if isinstance(item, str):
                    texts.append(item)
                elif isinstance(item, TextContent):
                    texts.append(item.content)
                elif not isinstance(item, CachePoint):
                    raise UserError(
                        'Files are not supported by this model: Edgewise sends the Decisions API text only.'
                    )
            if len(texts) == 1:
                self._message('user', texts[0])
            else:
                self.items.append({'role': 'user', 'content': [{'type': 'input_text', 'text': text} for text in texts]})
        elif isinstance(part, ToolReturnPart):
            self._tool_return(part, calls)
        elif isinstance(part, (RetryFeedbackPart, RetryPromptPart)):
            # The application speaking: as a user message it would read as a newer request, the one judged.
            self._message('developer', part.model_response())

    def _tool_return(self, part: ToolReturnPart | NativeToolReturnPart, calls: set[str]) -> None:
        if part.files:
            raise UserError('Files are not supported by this model: a file in a tool result cannot be sent to it.')
        if part.tool_call_id in calls:
            output = part.model_response_str()
            self.items.append({'type': 'function_call_output', 'call_id': part.tool_call_id, 'output': output})
            return
        # A result whose call was trimmed away: the API refuses it as an item, so it goes framed as the tool's.
        opening, closing = frame_tags(TOOL_RESULT_TAG, tool_name=part.tool_name, tool_call_id=part.tool_call_id)
        self._message('user', f'{opening}{part.model_response_str()}{closing}')

    def _response_part(self, part: Any, calls: set[str]) -> None:
        if isinstance(part, TextPart):
            self._message('assistant', part.content)
        elif isinstance(part, (ThinkingPart, CompactionPart)):
            if part.content:
                self._message('assistant', part.content)
        elif isinstance(part, (ToolCallPart, NativeToolCallPart)):
            self.items.append(
                {
                    'type': 'function_call',
                    'call_id': part.tool_call_id,
                    'name': part.tool_name,
                    'arguments': part.args_as_json_str(),
                }
            )
        elif isinstance(part, NativeToolReturnPart):
            self._tool_return(part, calls)
        else:
            raise UserError(
                'Files are not supported by this model: a file in the message history cannot be sent to it.'
            )


@dataclass(kw_only=True)
class _Option:
    value: str | bool
    probability: float


@dataclass(kw_only=True)
class _Level:
    value: int
    probability: float
    label: str


@dataclass(kw_only=True)
class _Predicate:
    type: Literal['predicate']
    probability: float
    name: str | None = None


@dataclass(kw_only=True)
class _Choice:
    type: Literal['choice']
    choice: str | bool
    confidence: float
    probabilities: list[_Option]
    name: str | None = None


@dataclass(kw_only=True)
class _Score:
    type: Literal['score']
    score: float
    confidence: float
    probabilities: list[_Level]
    name: str | None = None


@dataclass(kw_only=True)
class _Refusal:
    type: Literal['refusal']
    name: str | None = None


@dataclass(kw_only=True)
class _TokenDetails:
    cached_tokens: int = 0
    cache_write_tokens: int = 0


@dataclass(kw_only=True)
class _Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    input_tokens_details: _TokenDetails = field(default_factory=_TokenDetails)


@dataclass(kw_only=True)
class _Decision:
    model: str
    answers: list[Annotated[_Predicate | _Choice | _Score | _Refusal, Field(discriminator='type')]]
    usage: _Usage = field(default_factory=_Usage)


_DECISION = TypeAdapter(_Decision)


def _answer(answer: _Predicate | _Choice | _Score) -> DecisionAnswer | None:
    """The API's answer as the protocol's, or `None` when no question here allows it (a boolean option, an option
    or level given twice)."""
    if isinstance(answer, _Predicate):
        return NoulAnswer(noul=answer.probability)
    if isinstance(answer, _Choice):
        options = {o.value: o.probability for o in answer.probabilities if isinstance(o.value, str)}
        if not isinstance(answer.choice, str) or len(options) != len(answer.probabilities):
            return None
        return ChoiceAnswer(choice=answer.choice, confidence=answer.confidence, probabilities=options)
    levels = {level.value: level.probability for level in answer.probabilities}
    if len(levels) != len(answer.probabilities):
        return None
    legend: dict[int, JsonValue] = {level.value: level.label for level in answer.probabilities}
    return ScoreAnswer(score=answer.score, confidence=answer.confidence, probabilities=levels, legend=legend)


class OpenAIDecisionsModel(HTTPDecisionModel):
    """OpenAI's Decisions API as a decision model, through an `OpenAIProvider` (key from `OPENAI_API_KEY`)."""

    max_images: ClassVar[int | None] = 128
    """The API takes at most 128 images a request (Edgewise sends none: see `supports_image_input`)."""
    max_questions: ClassVar[int | None] = 200
    """The API takes at most 200 questions a request."""
    max_choice_options: ClassVar[int | None] = 255
    """The API takes at most 255 options in one pick-one."""
    max_score_levels: ClassVar[int | None] = 10
    """The API takes at most 10 levels in one rubric."""

    def __init__(
        self,
        model_name: OpenAIDecisionsModelName,
        *,
        provider: Literal['openai', 'openai-decisions'] | Provider[Any] = 'openai-decisions',
        profile: ModelProfileSpec | None = None,
        settings: ModelSettings | None = None,
    ) -> None:
        """Configure the model.

        Args:
            model_name: The model to ask, such as `gpt-6-luna`.
            provider: An `OpenAIProvider` (as for the other OpenAI models), or `'openai'` / `'openai-decisions'`,
                which make one from the environment.
            profile: A (partial) profile merged over a decision model's profile for the name, or a function of it.
            settings: Default settings of this model's requests.
        """
        super().__init__(
            model_name,
            infer_provider('openai') if isinstance(provider, str) else provider,
            profile=profile,
            settings=settings,
        )

    def _undecided_profile(self) -> ModelProfile:
        # The provider would profile `gpt-6-luna` as a Responses API model, whose output modes this endpoint lacks.
        return resolve_profile(decision_model_profile(self._model_name), self._profile_spec)

    @property
    def system(self) -> str:
        """`'openai-decisions'`, whatever the provider is called: it tells these responses from the Responses API's
        (same URL), which have an id to continue from."""
        return 'openai-decisions'

    async def decide(self, request: DecisionRequest, model_settings: DecisionModelSettings) -> DecisionResponse:
        """Send one request to `/decisions`.

        Raises:
            UserError: images, or files in the conversation (Edgewise sends text only).
            ModelHTTPError: the API answered with an error status (after the provider's retries).
            ModelAPIError: the API could not be reached, or more questions than it takes.
            ContentFilterError: the API declined to answer a question.
            UnexpectedModelBehavior: the answer is not of the API's shape, or does not fit its questions.
        """
        self._check_request_limits(image_count=len(request.images), question_count=len(request.questions))
        if request.images:
            raise UserError('Image input is not supported by this model in Edgewise: it sends the Decisions API text.')
        decision_input = _Conversation().read(request.messages) if request.messages else _text(request.state)
        body: dict[str, Any] = {
            'model': self._model_name,
            'input': decision_input,
            'questions': [_question(name, question) for name, question in request.questions.items()],
        }
        if (extra := model_settings.get('extra_body')) is not None:
            if not isinstance(extra, dict):
                raise UserError(
                    f'`extra_body` must be a mapping to send it to the OpenAI Decisions API; got {extra!r}.'
                )
            body.update(extra)
        call = self._call(
            self._provider.endpoint_url('/decisions', self._model_name),
            body,
            model_settings,
            endpoint_name='decisions',
            error_key='error',
            http_error=openai_http_error,
        )
        data, response_headers = await _http.post_for_data_and_headers(call)
        return self._read(data, request.questions, response_headers.get('x-request-id'))

    def _read(self, data: Any, questions: dict[str, DecisionQuestion], request_id: str | None) -> DecisionResponse:
        raw = repr(data)[:2000]
        try:
            decision = _DECISION.validate_python(data)
        except ValidationError as e:
            raise UnexpectedModelBehavior(f'Invalid response from the OpenAI Decisions API: {e}', raw) from e
        by_name = {answer.name: answer for answer in decision.answers if answer.name is not None}
        if len(by_name) != len(decision.answers) or by_name.keys() != questions.keys():
            raise UnexpectedModelBehavior(
                'Invalid response from the OpenAI Decisions API: answer names do not match the questions', raw
            )
        answers: dict[str, DecisionAnswer] = {}
        refused: list[str] = []
        for name, question in questions.items():
            given = by_name[name]
            if isinstance(given, _Refusal):
                refused.append(name)
            elif (converted := _answer(given)) is not None and answer_fits(question, converted):
                answers[name] = converted
            else:
                raise UnexpectedModelBehavior(
                    f'Invalid response from the OpenAI Decisions API: answer {name!r} does not match its question: '
                    f'{given!r}',
                    raw,
                )
        if refused:
            raise ContentFilterError(
                'Content filter triggered. The OpenAI Decisions API declined to answer: '
                + ', '.join(map(repr, refused)),
                raw,
            )
        usage = decision.usage
        return DecisionResponse(
            answers=answers,
            model_name=decision.model,
            usage=RequestUsage(
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                cache_read_tokens=usage.input_tokens_details.cached_tokens,
                cache_write_tokens=usage.input_tokens_details.cache_write_tokens,
            ),
            provider_response_id=request_id,
        )
