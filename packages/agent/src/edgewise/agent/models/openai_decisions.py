"""`OpenAIDecisionsModel`: OpenAI's Decisions API (`POST /v1/decisions`, `'openai-decisions:gpt-6-luna'`), which runs
a GPT model as a decision model (`edgewise.agent.models.decision`).

A request sends the conversation as the Responses API's input items (`message`, `function_call`,
`function_call_output`; a lone user text as plain text), or the judged `state` as text when `decide` is called without
one. Images go as `input_image` data URIs with their `detail`: in place in the conversation's messages and tool
outputs, or, with the state alone, in one user message after the state, each after an `<image N>:` label. The
questions go as a list: a yes/no is a `predicate` (what yes and no mean folded into its instructions), a pick-one a
`choice` of `{value, description}`, a rubric a `score` of `{label, description}` levels. Each answer comes back under
its question's `name`; a `refusal` is a `ContentFilterError`. The call goes through the shared HTTP layer with the
`OpenAIProvider`'s key, retries and OpenAI's error categories.
"""

from __future__ import annotations as _annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, JsonValue, TypeAdapter, ValidationError

from .._messages.framing import TOOL_RESULT_TAG, frame_tags
from ..exceptions import ContentFilterError, UnexpectedModelBehavior, UserError
from ..messages import (
    BinaryContent,
    CachePoint,
    CompactionPart,
    FilePart,
    ImageUrl,
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


def _is_image(item: object) -> bool:
    return isinstance(item, ImageUrl) or (isinstance(item, BinaryContent) and item.is_image)


def _state_input(request: DecisionRequest) -> str | list[dict[str, Any]]:
    """The state alone (no conversation): as text, or with images as one user message, each image after its label."""
    text = _text(request.state)
    if not request.images:
        return text
    content: list[dict[str, Any]] = [{'type': 'input_text', 'text': text}]
    for index, image in enumerate(request.images, start=1):
        sent: dict[str, Any] = {'type': 'input_image', 'image_url': image.data_uri}
        if image.vendor_metadata:
            sent['detail'] = image.vendor_metadata.get('detail', 'auto')
        content += [{'type': 'input_text', 'text': f'<image {index}>:'}, sent]
    return [{'role': 'user', 'content': content}]


class _Conversation:
    """A conversation as the Responses API input items the Decisions API reads (no item ids).

    Each image the messages hold takes the next of the request's `images` (resolved, in the order they appear), sent
    as an `input_image` data URI with its `detail` (`vendor_metadata`, default `'auto'`): in place in a user message or
    a tool output; after its `<image N>` label where only text can refer to it (a failed tool output's error text,
    an assistant message).
    """

    def __init__(self, images: Sequence[BinaryContent]) -> None:
        self.items: list[dict[str, Any]] = []
        self._images = iter(enumerate(images, start=1))

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
        if next(self._images, None) is not None:
            raise UserError('`request.images` holds more images than `request.messages` refers to.')
        if len(self.items) == 1 and self.items[0]['role'] == 'user' and isinstance(self.items[0]['content'], str):
            return str(self.items[0]['content'])  # a lone text prompt goes as plain text
        return self.items

    def _image(self, item: object, where: str) -> tuple[int, dict[str, Any]]:
        """The next of the request's images, as an `input_image`, and its `<image N>` index."""
        if not _is_image(item):
            raise UserError(
                f'{where} holds {type(item).__name__} content, neither text nor an image: the OpenAI Decisions API '
                'takes text and images only.'
            )
        try:
            index, image = next(self._images)
        except StopIteration:
            raise UserError('`request.messages` refers to more images than `request.images` holds.') from None
        detail = (image.vendor_metadata or {}).get('detail', 'auto')
        return index, {'type': 'input_image', 'image_url': image.data_uri, 'detail': detail}

    def _message(self, role: str, content: str) -> None:
        self.items.append({'role': role, 'content': content})

    def _user(self, items: Sequence[object], where: str) -> None:
        """A user message of text and images: plain text when it is one text."""
        if len(items) == 1 and isinstance(items[0], str):
            self._message('user', items[0])
            return
        content = [
            {'type': 'input_text', 'text': item} if isinstance(item, str) else self._image(item, where)[1]
            for item in items
        ]
        self.items.append({'role': 'user', 'content': content})

    def _request_part(self, part: Any, calls: set[str]) -> None:
        if isinstance(part, SystemPromptPart):
            self._message('system', part.content)
        elif isinstance(part, UserPromptPart):
            items: list[object] = []
            for item in [part.content] if isinstance(part.content, str) else part.content:
                if isinstance(item, TextContent):
                    items.append(item.content)
                elif not isinstance(item, CachePoint):
                    items.append(item)
            self._user(items, 'A user prompt')
        elif isinstance(part, ToolReturnPart):
            self._tool_return(part, calls)
        elif isinstance(part, (RetryFeedbackPart, RetryPromptPart)):
            # The application speaking: as a user message it would read as a newer request, the one judged.
            self._message('developer', part.model_response())

    def _output(self, part: ToolReturnPart | NativeToolReturnPart) -> list[dict[str, Any]]:
        """A tool output holding files, as its text and images in order. A failed one's text is one error text that
        refers to each image by its label, the labelled images after it."""
        if part.outcome == 'failed':
            labelled: list[str] = []
            images: list[dict[str, Any]] = []
            for item in part.content_items(mode='str', wrap_if_error=False):
                if isinstance(item, str):
                    labelled.append(item)
                    continue
                index, image = self._image(item, 'A tool result')
                labelled.append(f'<image {index}>')
                images += [{'type': 'input_text', 'text': f'<image {index}>:'}, image]
            text = dataclasses.replace(part, content=labelled).model_response_str()
            return [{'type': 'input_text', 'text': text}, *images]
        return [
            {'type': 'input_text', 'text': item} if isinstance(item, str) else self._image(item, 'A tool result')[1]
            for item in part.content_items(mode='str')
        ]

    def _tool_return(self, part: ToolReturnPart | NativeToolReturnPart, calls: set[str]) -> None:
        if part.tool_call_id in calls:
            output = self._output(part) if part.files else part.model_response_str()
            self.items.append({'type': 'function_call_output', 'call_id': part.tool_call_id, 'output': output})
            return
        # A result whose call was trimmed away: the API refuses it as an item, so it goes framed as the tool's.
        opening, closing = frame_tags(TOOL_RESULT_TAG, tool_name=part.tool_name, tool_call_id=part.tool_call_id)
        if part.files:
            self._user([opening, *part.content_items(mode='str'), closing], 'A tool result')
        else:
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
        elif isinstance(part, FilePart):
            # An assistant message takes text only: it refers to the image, which follows in a user message.
            index, image = self._image(part.content, 'The message history')
            self._message('assistant', f'<image {index}>')
            self.items.append({'role': 'user', 'content': [{'type': 'input_text', 'text': f'<image {index}>:'}, image]})
        else:
            raise UserError('The message history holds a part the Decisions API cannot take.')


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

    supports_image_input: ClassVar[bool] = True
    """The API takes images: each is sent as an `input_image` data URI (see `decide`)."""
    max_images: ClassVar[int | None] = 128
    """The API takes at most 128 images a request (a `ModelAPIError` before any image URL is downloaded)."""
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
            UserError: a file that is not an image, or `images` that do not match the images `messages` holds.
            ModelHTTPError: the API answered with an error status (after the provider's retries).
            ModelAPIError: the API could not be reached, or more questions than it takes.
            ContentFilterError: the API declined to answer a question.
            UnexpectedModelBehavior: the answer is not of the API's shape, or does not fit its questions.
        """
        self._check_request_limits(image_count=len(request.images), question_count=len(request.questions))
        if any(not image.is_image for image in request.images):
            raise UserError('The OpenAI Decisions API takes images only: `request.images` holds another file.')
        if request.messages:
            decision_input = _Conversation(request.images).read(request.messages)
        else:
            decision_input = _state_input(request)
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
