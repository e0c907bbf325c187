"""`SystemOneModel`: decision models served over the `POST /v1/systemone` API (`'system-one:clm-latest'`).

The request body is `{'state', 'model', 'questions'}` (each question in the protocol's JSON, `temperature` and
`extra_body` added when set); the answer is `{'model', 'answers', 'usage': {'input_tokens', 'output_tokens'}}`, every
answer checked against its question. The call goes through the shared HTTP layer (one attempt, as the provider
says), so an error status is a `ModelHTTPError` with any key the body echoes redacted.

```python {test="skip"}
from pydantic import BaseModel, Field

from edgewise.agent import Agent


class Handling(BaseModel):
    irreversible: bool = Field(description='Would running this destroy data or leak secrets?')


agent = Agent('system-one:clm-latest', output_type=Handling)
```
"""

from __future__ import annotations as _annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal, cast

from pydantic import Field, TypeAdapter, ValidationError

from ..exceptions import UnexpectedModelBehavior, UserError
from ..profiles import ModelProfile, ModelProfileSpec, resolve_profile
from ..providers.system_one import SystemOneProvider
from ..settings import ModelSettings
from ..usage import RequestUsage
from . import _http
from ._decision_http import HTTPDecisionModel
from ._decision_protocol import DecisionQuestion, WireAnswer, WireQuestion, answer_fits, wire
from .decision import DecisionModel, DecisionModelSettings, DecisionRequest, DecisionResponse

__all__ = ('SystemOneModel', 'SystemOneModelName', 'SystemOneModelSettings')

SystemOneModelName = str
"""The name the API serves a model under, such as `clm-latest`."""


class SystemOneModelSettings(DecisionModelSettings, total=False):
    """The settings of a System One request (no `system_one_`-prefixed ones yet)."""


@dataclass(kw_only=True)
class _Usage:
    input_tokens: Annotated[int, Field(ge=0)] = 0
    output_tokens: Annotated[int, Field(ge=0)] = 0


@dataclass(kw_only=True)
class _Answered:
    model: str
    answers: dict[str, WireAnswer]
    usage: _Usage


_ANSWERED = TypeAdapter(_Answered)
_QUESTIONS = TypeAdapter(dict[str, WireQuestion])


class SystemOneModel(HTTPDecisionModel):
    """A decision model behind a System One API (`SystemOneProvider`: its URL and optional key)."""

    requires_instructions: ClassVar[bool] = True
    """The API's schema requires `instructions` on every question."""
    unsupported_settings: ClassVar[frozenset[str]] = (DecisionModel.unsupported_settings - {'temperature'}) | {
        'max_retries'
    }
    """The API takes a `temperature`; the provider makes one attempt, so no retry count either."""

    def __init__(
        self,
        model_name: SystemOneModelName,
        *,
        provider: Literal['system-one'] | SystemOneProvider = 'system-one',
        profile: ModelProfileSpec | None = None,
        settings: ModelSettings | None = None,
    ) -> None:
        """Configure the model.

        Args:
            model_name: The name the API serves the model under, such as `clm-latest`.
            provider: The provider with the API's URL and key; `'system-one'` makes one from the environment.
            profile: A (partial) profile merged over the provider's, or a function of it.
            settings: Default settings of this model's requests.
        """
        super().__init__(
            model_name,
            SystemOneProvider() if isinstance(provider, str) else provider,
            profile=profile,
            settings=settings,
        )

    def _undecided_profile(self) -> ModelProfile:
        return resolve_profile(self._provider.model_profile(self._model_name), self._profile_spec)

    @property
    def system(self) -> str:
        """The provider's name, `'system-one'`."""
        return self._provider.name

    def _url(self) -> str:
        base = self.base_url.rstrip('/')
        return f'{base}/systemone' if base.endswith('/v1') else f'{base}/v1/systemone'

    def _body(
        self, request: DecisionRequest, settings: DecisionModelSettings
    ) -> tuple[dict[str, Any], dict[str, DecisionQuestion]]:
        """The JSON body, and the questions it asks (an `extra_body` may replace them)."""
        body: dict[str, Any] = {
            'state': request.state,
            'model': self._model_name,
            'questions': {name: wire(question) for name, question in request.questions.items()},
        }
        if (temperature := settings.get('temperature')) is not None:
            body['temperature'] = temperature
        extra = settings.get('extra_body')
        if extra is None:
            return body, request.questions
        if not isinstance(extra, Mapping):
            raise UserError(f'`extra_body` must be a mapping to send it to the System One API; got {extra!r}.')
        body.update(cast('Mapping[str, Any]', extra))
        if 'questions' not in extra:
            return body, request.questions
        try:
            return body, _QUESTIONS.validate_python(body['questions'])
        except ValidationError as e:
            raise UserError(f'Cannot validate the `extra_body.questions` override: {e}') from e

    async def decide(self, request: DecisionRequest, model_settings: DecisionModelSettings) -> DecisionResponse:
        """Send one request to `/v1/systemone`.

        Raises:
            UserError: the request has images (the API takes text only), or a bad `extra_body`.
            ModelHTTPError: the API answered with an error status.
            ModelAPIError: the API could not be reached or timed out.
            UnexpectedModelBehavior: the answer is not of the API's shape, or does not fit its questions.
        """
        if request.images:
            raise UserError('System One does not support image input.')
        body, questions = self._body(request, model_settings)
        call = self._call(self._url(), body, model_settings, endpoint_name='systemone')
        data = await _http.post_for_data(call)
        try:
            answered = _ANSWERED.validate_python(data)
        except ValidationError as e:
            raise UnexpectedModelBehavior(f'Invalid response from the System One API: {e}', repr(data)[:2000]) from e
        if answered.answers.keys() != questions.keys():
            raise UnexpectedModelBehavior(
                'Invalid response from the System One API: answer names do not match the questions', repr(data)[:2000]
            )
        for name, question in questions.items():
            answer = answered.answers[name]
            if not answer_fits(question, answer):
                raise UnexpectedModelBehavior(
                    f'Invalid response from the System One API: answer {name!r} does not match its question: '
                    f'{answer!r}',
                    repr(data)[:2000],
                )
        return DecisionResponse(
            answers=answered.answers,
            model_name=answered.model,
            usage=RequestUsage(input_tokens=answered.usage.input_tokens, output_tokens=answered.usage.output_tokens),
        )
