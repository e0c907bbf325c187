"""Decision models (pydantic-ai 2.68's `pydantic_ai.models.decision`): models that answer typed questions about a
conversation with probabilities, instead of writing text, and the agent machinery that maps a run onto them.

A decision model is sent a *state* (the text or JSON value to judge) and named questions of three kinds: yes/no
(`NoulQuestion`), pick-one (`ChoiceQuestion`) and rubric (`ScoreQuestion`); it answers each with a probability or a
distribution (the Decisions protocol). `DecisionModel` turns an agent request into such questions:

- the `output_type`'s fields are the questions, by type (`bool`, `Literal`/`Enum`, bounded numbers, rubrics,
  lists and mappings of options, optional pick-ones, nested models: see `models._decision_fields`);
- with function tools, a union of output types or a `None` route, one more pick-one (`route`) asks which route the
  text calls for; the fields of the routes it can fill are asked beside it while that is cheap, or the picked route
  is filled in a second request;
- the answers come back as one `ToolCallPart` (an output tool's or a function tool's, with its arguments), each
  field's confidence and distribution, and the route pick, in `ModelResponse.provider_details`;
- a pick the model cannot fill raises `UnfillableRoute`, one below `decision_route_threshold` raises `UnsureRoute`:
  both `ModelAPIError`s, so a `FallbackModel` with a language model behind hands it the step.

To support a backend, subclass `DecisionModel` and implement `decide`, `model_name`, `system` and `base_url`.
"""

from __future__ import annotations as _annotations

import dataclasses
import json
from abc import abstractmethod
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any, ClassVar, cast

from pydantic import JsonValue

from .. import _instrument
from .._messages.tool_parts import generate_tool_call_id
from .._tools.definition import ToolDefinition
from .._warnings import PydanticAIDeprecationWarning
from ..exceptions import ModelAPIError, UnexpectedModelBehavior, UserError
from ..messages import BinaryContent, ImageUrl, ModelMessage, ModelResponse, ToolCallPart
from ..profiles import ModelProfile, merge_profile
from ..settings import ModelSettings
from ..usage import RequestUsage
from ._completed_response import CompletedStreamedResponse
from ._decision_fields import FieldQuestions, Limits, has_fields, none_route, properties_of
from ._decision_protocol import (
    ChoiceAnswer,
    ChoiceQuestion,
    DecisionAnswer,
    DecisionQuestion,
    DecisionRequest,
    DecisionResponse,
    NoulAnswer,
    NoulCriteria,
    NoulQuestion,
    ScoreAnswer,
    ScoreQuestion,
)
from ._decision_routes import ROUTE_KEY, Speculation, fillable_outputs, route_labels, route_question
from ._decision_state import ImageInput, judged_state, tools_left
from ._downloads import download
from ._model import Model, RunContext, check_allow_model_requests
from ._request_parameters import ModelRequestParameters, request_instructions
from ._streamed_response import StreamedResponse

__all__ = (
    'ChoiceAnswer',
    'ChoiceQuestion',
    'DecisionAnswer',
    'DecisionHandOff',
    'DecisionModel',
    'DecisionModelSettings',
    'DecisionQuestion',
    'DecisionRequest',
    'DecisionResponse',
    'DecisionStreamedResponse',
    'NoulAnswer',
    'NoulCriteria',
    'NoulQuestion',
    'ScoreAnswer',
    'ScoreQuestion',
    'UnfillableRoute',
    'UnsureRoute',
)


class DecisionModelSettings(ModelSettings, total=False):
    """The settings of a decision model request: the bars a probability must clear."""

    decision_boolean_threshold: float
    """How likely yes must be for a `bool` field (and each option of a list or mapping of options) to be `True`,
    from 0 to 1 (default 0.5). A bounded number field gets the probability itself, not held to it. A field's reported
    confidence is its distance from this bar, scaled to 0..1 on the side the answer fell."""

    decision_route_threshold: float
    """How likely the picked route must be to be taken, from 0 to 1 (unset: every pick is). A pick below it raises
    `UnsureRoute` before anything is sent to fill it. A route taken without a pick (the only one left) is not held to
    it."""


class DecisionHandOff(ModelAPIError):
    """A decision model handed the step off instead of answering it (the base of `UnfillableRoute` and
    `UnsureRoute`). A `ModelAPIError`, so `FallbackModel(decision_model, language_model)` gives the language model
    the step; `fallback_on=DecisionHandOff` hands off only these."""

    route: str
    """The label of the route picked, as the route question offered it."""
    probability: float
    """How likely the model found the picked route, from 0 to 1."""

    def __init__(self, model_name: str, route: str, probability: float, message: str) -> None:
        self.route = route
        self.probability = probability
        super().__init__(model_name, message)

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.model_name, self.route, self.probability, self.message), self.__getstate__()


class UnfillableRoute(DecisionHandOff):
    """The model picked a route whose fields or arguments it cannot fill (a free-form `str` argument, say)."""

    def __init__(self, model_name: str, route: str, probability: float) -> None:
        super().__init__(
            model_name,
            route,
            probability,
            f'{model_name} picked {route!r} (probability {probability:.2f}) but cannot fill it. Put a model that '
            'can behind it: `FallbackModel(decision_model, language_model)` hands `language_model` this step.',
        )

    @property
    def tool_name(self) -> str:
        """Deprecated: the picked route's label; use `route`."""
        import warnings

        warnings.warn('`tool_name` is deprecated, use `route` instead.', PydanticAIDeprecationWarning, stacklevel=2)
        return self.route

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.model_name, self.route, self.probability), self.__getstate__()


class UnsureRoute(DecisionHandOff):
    """The model picked a route less likely than `decision_route_threshold` (raised before any request fills it)."""

    probabilities: dict[str, float]
    """The probability of every route, by label."""
    threshold: float
    """The `decision_route_threshold` the pick fell below."""

    def __init__(self, model_name: str, route: str, probabilities: dict[str, float], threshold: float) -> None:
        self.probabilities = probabilities
        self.threshold = threshold
        probability = probabilities[route]
        super().__init__(
            model_name,
            route,
            probability,
            f'{model_name} picked {route!r} with probability {probability:.2f}, below '
            f'`decision_route_threshold` ({threshold:.2f}). Put a model behind it to take the steps it is unsure '
            'of: `FallbackModel(decision_model, language_model)` hands `language_model` this step.',
        )

    def __reduce__(self) -> tuple[Any, ...]:
        args = (self.model_name, self.route, self.probabilities, self.threshold)
        return type(self), args, self.__getstate__()


_DEFAULT_BOOLEAN_THRESHOLD = 0.5


def _threshold(settings: DecisionModelSettings, name: str, default: float) -> float:
    value = cast(float, settings.get(name, default))
    if not 0 <= value <= 1:
        raise UserError(f'`{name}` must be between 0 and 1; got {value!r}.')
    return value


def _empty_details() -> dict[str, Any]:
    return {'confidence': {}, 'probabilities': {}, 'scores': {}}


def _certain(label: str) -> dict[str, Any]:
    """`provider_details['route']` of the one route left, taken without asking."""
    return {'choice': label, 'probabilities': {label: 1.0}, 'offered': [label]}


def _route_args(tool: ToolDefinition) -> dict[str, Any]:
    """A route's arguments when nothing is filled: none, or the `None` a `None` route wraps."""
    return dict.fromkeys(properties_of(tool.parameters_json_schema)) if none_route(tool) else {}


def _picked(answer: object, routes: dict[str, ToolDefinition]) -> dict[str, Any]:
    if (
        not isinstance(answer, ChoiceAnswer)
        or answer.choice not in answer.probabilities
        or not all(0 <= p <= 1 for p in answer.probabilities.values())
    ):
        raise UnexpectedModelBehavior(f'Unexpected answer from the model for the route question: {answer!r}')
    if answer.choice not in routes:
        raise UnexpectedModelBehavior(f'The model picked a route it was not offered: {answer.choice!r}')
    return {'choice': answer.choice, 'probabilities': dict(answer.probabilities), 'offered': list(routes)}


class DecisionModel(Model):
    """The base of decision models: maps an agent request onto the Decisions protocol (see the module docstring).

    Subclasses implement `decide` (one request to the backend), `model_name`, `system` and `base_url`, and set the
    backend's limits below, or have the provider's `DecisionModelProfile` set them per model name.
    """

    supports_image_input: ClassVar[bool] = False
    """Whether the backend takes images in `DecisionRequest.images`. When set, each image of the conversation
    (`BinaryContent` or `ImageUrl`) stands in the state as `<image N>` and goes in `images` in that order, image URLs
    downloaded once the request passed its limits; other files are refused. Unset, any file is a `UserError`."""
    max_images: ClassVar[int | None] = None
    """The most images one request takes (`None`: no limit); a request over it is a `ModelAPIError`, raised before
    any image URL is downloaded."""
    max_questions: ClassVar[int | None] = None
    """The most questions one request takes (`None`: no limit); a request over it is a `ModelAPIError`."""
    max_choice_options: ClassVar[int | None] = None
    """The most options of one pick-one, unless the profile's `decision_max_choice_options` says."""
    max_score_levels: ClassVar[int | None] = None
    """The most levels of one rubric, unless the profile's `decision_max_score_levels` says."""
    requires_instructions: ClassVar[bool] = False
    """Whether the backend refuses a question without `instructions`, unless the profile's
    `decision_requires_instructions` says."""
    unsupported_settings: ClassVar[frozenset[str]] = frozenset(
        {'frequency_penalty', 'logit_bias', 'presence_penalty', 'seed', 'service_tier', 'temperature', 'top_k', 'top_p'}
    )
    """Settings a decision model has no use for."""

    _decision_profile: ModelProfile | None = None

    def _undecided_profile(self) -> ModelProfile:
        """The profile before the facts of a decision model are set over it (a provider's, in subclasses)."""
        return super().profile

    @property
    def profile(self) -> ModelProfile:
        """The profile, with what every decision model is: no text output, system prompts kept inline (they are
        judged, not asked), images only as the class takes them (`supports_image_input`), and no other files."""
        if self._decision_profile is None:
            self._decision_profile = merge_profile(
                self._undecided_profile(),
                ModelProfile(
                    supports_text_output=False,
                    supports_inline_system_prompts=True,
                    supports_image_input=self.supports_image_input,
                    supports_document_input=False,
                    supports_audio_file_input=False,
                    supports_video_input=False,
                ),
            )
        return self._decision_profile

    @property
    @abstractmethod
    def base_url(self) -> str | None:
        """The backend's URL, recorded on responses."""
        raise NotImplementedError

    @abstractmethod
    async def decide(self, request: DecisionRequest, model_settings: DecisionModelSettings) -> DecisionResponse:
        """Send one request to the backend; every question needs an answer of its kind under its name.

        Raises:
            ModelHTTPError: the backend answered with an error status.
            ModelAPIError: the backend could not be reached.
            UnexpectedModelBehavior: the answer cannot be read.
            UserError: the request cannot be sent as given (images to a backend without image input, a file that is
                not an image to one with it).
        """
        raise NotImplementedError

    def _limits(self) -> Limits:
        profile = cast(dict[str, Any], self.profile)
        return Limits(
            choice_options=profile.get('decision_max_choice_options', self.max_choice_options),
            score_levels=profile.get('decision_max_score_levels', self.max_score_levels),
            requires_instructions=profile.get('decision_requires_instructions', self.requires_instructions),
            questions=self.max_questions,
        )

    def _check_request_limits(self, *, image_count: int = 0, question_count: int = 0) -> None:
        for kind, count, limit in (
            ('images', image_count, self.max_images),
            ('questions', question_count, self.max_questions),
        ):
            if limit is not None and count > limit:
                raise ModelAPIError(self.model_name, f'{self.model_name} accepts at most {limit} {kind}; got {count}.')

    def _decision_input(self, messages: list[ModelMessage], *, turn: bool) -> tuple[JsonValue, list[ImageInput]]:
        """The state to judge and the images it labels (none unless the backend takes images), URLs unresolved."""
        images: list[ImageInput] = []
        state = judged_state(messages, turn=turn, images=images if self.supports_image_input else None)
        return state, images

    async def _prepared(
        self,
        state: JsonValue,
        images: list[ImageInput],
        questions: dict[str, DecisionQuestion],
        messages: list[ModelMessage],
    ) -> DecisionRequest:
        """The request, once it is within the backend's limits: only then are its image URLs downloaded.

        Raises:
            ModelAPIError: more images or questions than the backend takes (nothing downloaded).
            UserError: an image URL could not be downloaded, or its data is not an image.
        """
        self._check_request_limits(image_count=len(images), question_count=len(questions))
        resolved: list[BinaryContent] = []
        downloaded: list[tuple[ImageUrl, BinaryContent]] = []  # an image given twice (equal URLs) is fetched once
        for image in images:
            if isinstance(image, ImageUrl):
                data = next((data for url, data in downloaded if url == image), None)
                if data is None:
                    data = await self._download_image(image)
                    if not data.is_image:
                        raise UserError(
                            f'The image URL {image.url} answered with {data.media_type!r} data, not an image.'
                        )
                    downloaded.append((image, data))
                image = data
            resolved.append(image)
        return DecisionRequest(state=state, questions=questions, images=tuple(resolved), messages=messages)

    async def _download_image(self, image: ImageUrl) -> BinaryContent:
        """The data of an image URL (a client of its own here; a backend behind a provider uses the provider's)."""
        import httpx

        async with httpx.AsyncClient() as client:
            return await download(image, client)

    async def _send(self, request: DecisionRequest, settings: DecisionModelSettings) -> DecisionResponse:
        """One request through `decide`, in a `decide` span inside an instrumented run's model request."""
        self._check_request_limits(image_count=len(request.images), question_count=len(request.questions))
        if not _instrument.in_traced_request():
            return await self.decide(request, settings)
        thresholds = {'boolean': _threshold(settings, 'decision_boolean_threshold', _DEFAULT_BOOLEAN_THRESHOLD)}
        if 'decision_route_threshold' in settings:
            thresholds['route'] = _threshold(settings, 'decision_route_threshold', 0.0)
        attributes = {
            'gen_ai.operation.name': 'decide',
            'gen_ai.system': self.system,
            'gen_ai.request.model': self.model_name,
            # By kind only: the questions' words are the user's content.
            'pydantic_ai.decision.questions': json.dumps({k: {'type': q.type} for k, q in request.questions.items()}),
            'pydantic_ai.decision.thresholds': json.dumps(thresholds),
        }
        with _instrument.span(f'decide {self.model_name}', **attributes) as span:
            response = await self.decide(request, settings)
            if span is not None:
                span.set_attribute('gen_ai.response.model', response.model_name)
                # This request's alone, not `gen_ai.usage.*`: the `chat` span above sums the step's requests.
                span.set_attribute('pydantic_ai.decision.usage.input_tokens', response.usage.input_tokens)
                span.set_attribute('pydantic_ai.decision.usage.output_tokens', response.usage.output_tokens)
                if response.provider_response_id is not None:
                    span.set_attribute('gen_ai.response.id', response.provider_response_id)
            return response

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        """Ask the request's questions and answer with one tool call (see the module docstring).

        Raises:
            UserError: an output type or tool the model cannot be asked about, or a threshold outside 0..1.
            UnfillableRoute: the picked route cannot be filled by this model.
            UnsureRoute: the pick is below `decision_route_threshold`.
            UnexpectedModelBehavior: an answer does not fit its question, or filling a picked route failed.
        """
        check_allow_model_requests()
        output_object = model_request_parameters.output_object
        output_name = output_object.name if output_object is not None else None
        model_settings, params = self.prepare_request(model_settings, model_request_parameters)
        output_tools = [t for t in params.output_tools if has_fields(t)]
        offered = [t for t in params.output_tools if not has_fields(t)]
        offered += [t for t in params.function_tools if not t.defer_loading or t.name in params.revealed_tool_names]
        tools, done = tools_left(messages, offered)
        routes = route_labels(output_tools, tools, output_name)
        forced = tools[0] if not output_tools and len(tools) == 1 and len(offered) > 1 else None
        if forced is not None and not has_fields(forced):
            return self._response(
                forced, _route_args(forced), RequestUsage(), self.model_name, self._forced_details(next(iter(routes)))
            )
        instructions = request_instructions(messages, params)
        settings = cast(DecisionModelSettings, model_settings or {})
        route_threshold = _threshold(settings, 'decision_route_threshold', 0.0)
        threshold = _threshold(settings, 'decision_boolean_threshold', _DEFAULT_BOOLEAN_THRESHOLD)
        limits = self._limits()
        if forced is not None:
            label = next(iter(routes))
            fill = FieldQuestions.to_fill(forced, instructions, limits, label=label)
            if fill is None:
                raise UnfillableRoute(self.model_name, label, 1.0)
            state, images = self._decision_input(messages, turn=done)
            template = await self._prepared(state, images, fill.questions, messages)
            response, args, details = await self._fill(label, fill, template, settings, threshold)
            details['route'] = _certain(label)
            return self._response(forced, args, response.usage, response.model_name, details)
        fillable = fillable_outputs(output_tools, offered, instructions, limits)
        if not tools and len(output_tools) == 1:
            return await self._single_output(
                output_tools[0], fillable, routes, messages, instructions, settings, threshold, limits, done
            )

        question = route_question(routes, output_tools, tools, instructions, limits)
        state, images = self._decision_input(messages, turn=done)
        speculation = Speculation.about(routes, output_tools, state, instructions, limits)
        questions: dict[str, DecisionQuestion] = {**speculation.questions(), ROUTE_KEY: question}
        template = await self._prepared(state, images, questions, messages)
        response = await self._send(template, settings)
        route_details = _picked(response.answers.get(ROUTE_KEY), routes)
        label = route_details['choice']
        probability = route_details['probabilities'][label]
        if probability < route_threshold:
            raise UnsureRoute(self.model_name, label, route_details['probabilities'], route_threshold)
        route = routes[label]
        usage = response.usage
        if label in speculation.asked:
            args, details = speculation.read(label, response.answers, threshold)
        elif not has_fields(route):
            args, details = _route_args(route), _empty_details()
        else:
            fill = FieldQuestions.to_fill(route, instructions, limits, label=label)
            if fill is None:
                raise UnfillableRoute(self.model_name, label, probability)
            response, args, details = await self._fill(label, fill, template, settings, threshold)
            usage = usage + response.usage
            details['requests'] = 2  # a request's usage counts one request; this step made two
        details['route'] = route_details
        return self._response(route, args, usage, response.model_name, details)

    async def _single_output(
        self,
        output_tool: ToolDefinition,
        fillable: list[ToolDefinition],
        routes: dict[str, ToolDefinition],
        messages: list[ModelMessage],
        instructions: str | None,
        settings: DecisionModelSettings,
        threshold: float,
        limits: Limits,
        turn: bool,
    ) -> ModelResponse:
        """One output type and nothing else on offer: no route to pick, only its fields to fill."""
        if not fillable:  # the other routes all returned this turn, and this one cannot be filled
            raise UnfillableRoute(self.model_name, next(iter(routes)), 1.0)
        asked = FieldQuestions.about(output_tool, instructions, limits, label=None)
        state, images = self._decision_input(messages, turn=turn)
        request = await self._prepared(state, images, asked.questions, messages)
        response = await self._send(request, settings)
        args, details = asked.read(response.answers, threshold)
        return self._response(output_tool, args, response.usage, response.model_name, details)

    async def _fill(
        self,
        label: str,
        fill: FieldQuestions,
        template: DecisionRequest,
        settings: DecisionModelSettings,
        threshold: float,
    ) -> tuple[DecisionResponse, dict[str, Any], dict[str, Any]]:
        """Ask a picked route's fields in a request of their own. The route was committed to: a failure here ends
        the step (a fallback model rerunning it could pick another route)."""
        try:
            response = await self._send(dataclasses.replace(template, questions=fill.questions), settings)
            args, details = fill.read(response.answers, threshold)
        except (ModelAPIError, UnexpectedModelBehavior) as e:
            raise UnexpectedModelBehavior(
                f'{self.model_name} selected {label!r}, but failed while filling its fields: {e}'
            ) from e
        return response, args, details

    def _forced_details(self, label: str) -> dict[str, Any]:
        return {**_empty_details(), 'route': _certain(label)}

    def _response(
        self, route: ToolDefinition, args: dict[str, Any], usage: RequestUsage, model_name: str, details: dict[str, Any]
    ) -> ModelResponse:
        return ModelResponse(
            parts=[ToolCallPart(route.name, args, generate_tool_call_id())],
            usage=usage,
            model_name=model_name,
            provider_name=self.system,
            provider_url=self.base_url,
            provider_details=details,
            finish_reason='tool_call',
        )

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncIterator[StreamedResponse]:
        """The answer arrives whole, so the stream is that answer's one tool call."""
        response = await self.request(messages, model_settings, model_request_parameters)
        yield DecisionStreamedResponse(model_request_parameters, response)


class DecisionStreamedResponse(CompletedStreamedResponse):
    """A decision model's whole answer as a stream (one part-start event per tool call), for streamed runs."""

    def __init__(self, model_request_parameters: ModelRequestParameters, _response: ModelResponse) -> None:
        """Wrap the whole answer `_response` to the request of `model_request_parameters`."""
        super().__init__(_response, model_request_parameters=model_request_parameters, replay_events=True)
        self.provider_details = _response.provider_details

    async def close_stream(self) -> None:
        """Nothing to close: the answer was whole before the first event."""
