"""`GoogleDecisionsModel`: the Gemini API's decisions endpoint (`POST /v1beta/decisions`,
`'google-decisions:gemini-decision-1'`), which runs a Gemini model as a decision model
(`edgewise.agent.models.decision`).

The body is `{'model', 'input', 'questions'}`. The input is the judged state as text (the API takes no conversation
turns), or, with images, a list of blocks: the state's text block, then each image as an `image` block (base64 `data`,
`mime_type`, and a `resolution` from `GoogleModel`'s `media_resolution` vendor metadata) after an `<image N>:` text
block. Each question goes in the protocol's shape with its instructions and meanings as text (a yes/no's as
`true_description` / `false_description`), under an id of its own (`q0`, `q1`, ...: the API takes ids of
`[A-Za-z0-9_-]` only, which names such as `Ticket.urgent` are not). The answers come back in the protocol's shape,
unrounded, so a distribution must sum to one within float error. The call goes through the shared HTTP layer with the
`GoogleProvider`'s key (`x-goog-api-key`), retries and Gemini's error categories.
"""

from __future__ import annotations as _annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, JsonValue, TypeAdapter, ValidationError

from ..exceptions import UnexpectedModelBehavior, UserError
from ..messages import BinaryContent
from ..profiles import ModelProfile, ModelProfileSpec, resolve_profile
from ..profiles.decision import decision_model_profile
from ..providers import Provider, infer_provider
from ..settings import ModelSettings
from ..usage import RequestUsage
from . import _http
from ._decision_http import HTTPDecisionModel
from ._decision_protocol import FLOAT_SLACK, WireAnswer, answer_fits, as_text
from ._error_categories import google_http_error
from .decision import (
    ChoiceQuestion,
    DecisionAnswer,
    DecisionModelSettings,
    DecisionQuestion,
    DecisionRequest,
    DecisionResponse,
    NoulAnswer,
    NoulQuestion,
)
from .google import API_VERSION

__all__ = ('GoogleDecisionsModel', 'GoogleDecisionsModelName', 'GoogleDecisionsModelSettings')

GoogleDecisionsModelName = str | Literal['gemini-decision-1']
"""The Gemini decision model to ask, such as `gemini-decision-1`."""


class GoogleDecisionsModelSettings(DecisionModelSettings, total=False):
    """The settings of a Gemini decisions request (no `google_decisions_`-prefixed ones yet)."""


def _described(meaning: JsonValue) -> str | None:
    return None if meaning is None else as_text(meaning)


def _question(question: DecisionQuestion) -> dict[str, Any]:
    """A protocol question as the API takes it: instructions and meanings as text."""
    sent: dict[str, Any] = {'type': question.type}
    if question.instructions is not None:
        sent['instructions'] = as_text(question.instructions)
    if isinstance(question, NoulQuestion):
        criteria = question.criteria
        sides = (('true', criteria.true), ('false', criteria.false)) if criteria is not None else ()
        if meanings := {f'{side}_description': as_text(m) for side, m in sides if m is not None}:
            sent['criteria'] = meanings
    elif isinstance(question, ChoiceQuestion):
        sent['criteria'] = {label: _described(meaning) for label, meaning in question.criteria.items()}
    else:
        sent['criteria'] = [_described(level) for level in question.criteria]
    return sent


_RESOLUTION_LEVELS = frozenset({'MEDIA_RESOLUTION_LOW', 'MEDIA_RESOLUTION_MEDIUM', 'MEDIA_RESOLUTION_HIGH'})
_RESOLUTION_LEVELS |= {'MEDIA_RESOLUTION_ULTRA_HIGH', 'MEDIA_RESOLUTION_UNSPECIFIED'}


def _resolution(image: BinaryContent) -> str | None:
    """The `resolution` of an image block, from the `media_resolution` a `GoogleModel` part takes (`{'level':
    'MEDIA_RESOLUTION_LOW'}`, case aside, or an SDK `PartMediaResolution`): `low`, `medium`, `high`, `ultra_high`."""
    setting = (image.vendor_metadata or {}).get('media_resolution')
    if setting is None:
        return None
    level = setting.get('level') if isinstance(setting, Mapping) else getattr(setting, 'level', None)
    level = getattr(level, 'value', level)  # an SDK enum member
    if level is None:
        return None
    if not isinstance(level, str):
        raise UserError(
            f"An image's `media_resolution` level must be a string such as 'MEDIA_RESOLUTION_LOW'; got {level!r}."
        )
    if level.upper() not in _RESOLUTION_LEVELS:  # as the SDK's `PartMediaResolution` refuses it
        raise UserError(
            f"An image's `media_resolution` level {level!r} is not one Gemini knows: give one of "
            f'{", ".join(sorted(_RESOLUTION_LEVELS))}.'
        )
    level = level.upper()
    if level == 'MEDIA_RESOLUTION_UNSPECIFIED':
        return None
    return level.removeprefix('MEDIA_RESOLUTION_').lower()


def _input(request: DecisionRequest) -> str | list[dict[str, str]]:
    """The state as text, and each image after its `<image N>:` label (the state already holds the conversation)."""
    text = as_text(request.state)
    if not request.images:
        return text
    blocks = [{'type': 'text', 'text': text}]
    for index, image in enumerate(request.images, start=1):
        block = {'type': 'image', 'data': image.base64, 'mime_type': image.media_type}
        if (resolution := _resolution(image)) is not None:
            block['resolution'] = resolution
        blocks += [{'type': 'text', 'text': f'<image {index}>:'}, block]
    return blocks


def _sums_to_one(answer: DecisionAnswer) -> bool:
    """Whether an unrounded distribution sums to one within float error (the rounding slack `answer_fits` allows
    would let through one that sums to far less)."""
    return isinstance(answer, NoulAnswer) or abs(sum(answer.probabilities.values()) - 1) <= FLOAT_SLACK


@dataclass(kw_only=True)
class _ModalityTokens:
    modality: str
    tokens: Annotated[int, Field(ge=0)]


@dataclass(kw_only=True)
class _Usage:
    total_input_tokens: Annotated[int, Field(ge=0)] = 0
    total_output_tokens: Annotated[int, Field(ge=0)] = 0
    input_tokens_by_modality: list[_ModalityTokens] = field(default_factory=list[_ModalityTokens])


@dataclass(kw_only=True)
class _Answered:
    answers: dict[str, WireAnswer]
    usage: _Usage


_ANSWERED = TypeAdapter(_Answered)


class GoogleDecisionsModel(HTTPDecisionModel):
    """The Gemini API's decisions endpoint as a decision model, through a `GoogleProvider` (key from
    `GOOGLE_API_KEY`)."""

    supports_image_input: ClassVar[bool] = True
    """The API takes images: each goes as an `image` block after its `<image N>:` label (see the module docstring)."""
    requires_instructions: ClassVar[bool] = True
    """The API refuses a question without `instructions`."""
    max_questions: ClassVar[int | None] = 1000
    """The API takes at most 1000 questions a request."""
    max_choice_options: ClassVar[int | None] = 255
    """The API takes at most 255 options in one pick-one."""
    max_score_levels: ClassVar[int | None] = 255
    """The API takes at most 255 levels in one rubric."""

    def __init__(
        self,
        model_name: GoogleDecisionsModelName,
        *,
        provider: Literal['google', 'google-decisions'] | Provider[Any] = 'google',
        profile: ModelProfileSpec | None = None,
        settings: ModelSettings | None = None,
    ) -> None:
        """Configure the model.

        Args:
            model_name: The Gemini decision model, such as `gemini-decision-1`.
            provider: A `GoogleProvider` (as for `GoogleModel`), or `'google'` / `'google-decisions'`, which make one
                from the environment.
            profile: A (partial) profile merged over a decision model's profile for the name, or a function of it.
            settings: Default settings of this model's requests.
        """
        super().__init__(
            model_name,
            infer_provider('google') if isinstance(provider, str) else provider,
            profile=profile,
            settings=settings,
        )

    def _undecided_profile(self) -> ModelProfile:
        # The provider profiles a Gemini name for `generateContent`, whose output modes this endpoint lacks.
        return resolve_profile(decision_model_profile(self._model_name), self._profile_spec)

    @property
    def system(self) -> str:
        """`'google-decisions'`, whatever the provider is called (a `GoogleModel` must not take these responses for
        its own)."""
        return 'google-decisions'

    async def decide(self, request: DecisionRequest, model_settings: DecisionModelSettings) -> DecisionResponse:
        """Send one request to `decisions`.

        Raises:
            UserError: a file that is not an image, an image's bad `media_resolution`, or an `extra_body` that is not
                a mapping or sets `questions`.
            ModelHTTPError: the API answered with an error status (after the provider's retries).
            ModelAPIError: the API could not be reached, or more questions than it takes.
            UnexpectedModelBehavior: the answer is not of the API's shape, or does not fit its questions.
        """
        self._check_request_limits(image_count=len(request.images), question_count=len(request.questions))
        if any(not image.is_image for image in request.images):
            raise UserError('The Gemini decisions endpoint takes images only: `request.images` holds another file.')
        names = {f'q{index}': name for index, name in enumerate(request.questions)}
        body: dict[str, Any] = {
            'model': self._model_name,
            'input': _input(request),
            'questions': {key: _question(request.questions[name]) for key, name in names.items()},
        }
        if (extra := model_settings.get('extra_body')) is not None:
            if not isinstance(extra, Mapping):
                raise UserError(f'`extra_body` must be a dict to send it to the Gemini API; got {extra!r}.')
            if any(str(key).replace('_', '').lower() == 'questions' for key in extra):
                raise UserError(
                    '`extra_body` cannot set `questions`: each question goes under an ID of its own, '
                    'which its answer is read back by.'
                )
            body.update(extra)
        call = self._call(
            self._provider.endpoint_url(f'/{API_VERSION}/decisions', self._model_name),
            body,
            model_settings,
            endpoint_name='decisions',
            error_key='error',
            http_error=google_http_error,
        )
        data = await _http.post_for_data(call)
        return self._read(data, request.questions, names)

    def _read(self, data: Any, questions: dict[str, DecisionQuestion], names: dict[str, str]) -> DecisionResponse:
        raw = repr(data)[:2000]
        try:
            answered = _ANSWERED.validate_python(data)
        except ValidationError as e:
            raise UnexpectedModelBehavior(f'Invalid response from the Gemini API: {e}', raw) from e
        if answered.answers.keys() != names.keys():
            raise UnexpectedModelBehavior(
                'Invalid response from the Gemini API: answer IDs do not match the questions', raw
            )
        answers: dict[str, DecisionAnswer] = {}
        for key, name in names.items():
            answer = answered.answers[key]
            if not (answer_fits(questions[name], answer) and _sums_to_one(answer)):
                raise UnexpectedModelBehavior(
                    f'Invalid response from the Gemini API: answer {name!r} does not match its question: {answer!r}',
                    raw,
                )
            answers[name] = answer
        usage = answered.usage
        details = {f'{entry.modality.lower()}_prompt_tokens': entry.tokens for entry in usage.input_tokens_by_modality}
        return DecisionResponse(
            answers=answers,
            model_name=self._model_name,  # the body names no model
            usage=RequestUsage(
                input_tokens=usage.total_input_tokens, output_tokens=usage.total_output_tokens, details=details
            ),
        )
