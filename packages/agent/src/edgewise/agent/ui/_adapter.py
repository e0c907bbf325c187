"""`UIAdapter`: runs an agent on what a UI protocol's request holds and answers with the protocol's events."""

from __future__ import annotations as _annotations

import warnings
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import KW_ONLY, Field, dataclass
from functools import cached_property
from http import HTTPStatus
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, Protocol, Self, cast, runtime_checkable

from pydantic import BaseModel, ValidationError
from typing_extensions import TypeVar

from edgewise.graph import BaseStatePersistence

from .._message_flow.cancellation import CancellationToken
from .._messages.sanitize import SanitizeOptions, drop_compaction_parts, sanitize_untrusted
from ..capabilities import AgentCapability, ReinjectSystemPrompt
from ..exceptions import UserError
from ..messages import ForceDownloadMode, ModelMessage
from ..models import KnownModelName, Model
from ..output import OutputDataT, OutputSpec
from ..settings import ModelSettings
from ..tools import AgentDepsT, DeferredToolRequests, DeferredToolResults
from ..toolsets import AbstractToolset
from ..usage import RunUsage, UsageLimits
from ._event_stream import NativeEvent, OnCancelFunc, OnCompleteFunc, UIEventStream
from ._starlette import starlette_module

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response, StreamingResponse

__all__ = ('DEFAULT_ALLOWED_CONTENT_TYPES', 'StateDeps', 'StateHandler', 'UIAdapter')

RunInputT = TypeVar('RunInputT')
MessageT = TypeVar('MessageT')
EventT = TypeVar('EventT')
StateT = TypeVar('StateT', bound=BaseModel)
_DepsT = TypeVar('_DepsT')
_OutputT = TypeVar('_OutputT')


DEFAULT_ALLOWED_CONTENT_TYPES: frozenset[str] = frozenset({'application/json'})
"""The media types `UIAdapter.from_request` (and `dispatch_request`) accept by default: a guard against cross-site
request forgery. A page of another site can make a browser send a body as `text/plain`, a form type or with no
`Content-Type` without asking the server first (no CORS preflight), with the user's cookies; `application/json` needs
a preflight, which only the application's CORS policy grants. The AG-UI and Vercel AI SDK clients send JSON."""


def _check_content_type(request: Request, allowed: frozenset[str] | None) -> None:
    """Refuse, with a 415 that Starlette answers itself, a request whose media type is not in `allowed` (`None`:
    any), before its body is read."""
    if allowed is None:
        return
    accepted = {media_type.strip().lower() for media_type in allowed}
    media_type = request.headers.get('content-type', '').split(';')[0].strip().lower()
    if media_type not in accepted:
        exceptions = starlette_module('exceptions', '`UIAdapter.from_request()`')
        raise exceptions.HTTPException(
            status_code=HTTPStatus.UNSUPPORTED_MEDIA_TYPE,
            detail=f'Expected `Content-Type: {", ".join(sorted(accepted))}`, got {media_type or "no content type"}.',
        )


@runtime_checkable
class StateHandler(Protocol):
    """Deps that take the state a frontend sends (AG-UI's shared state): a dataclass with a `state` field."""

    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]

    @property
    def state(self) -> Any:
        """The run's state, as the frontend sent it."""
        ...

    @state.setter
    def state(self, state: Any) -> None: ...


@dataclass
class StateDeps(Generic[StateT]):
    """Deps holding the frontend's state as a pydantic model: the adapter validates the state sent into it."""

    state: StateT
    """The state; replaced by the adapter with the one the request holds."""


@dataclass
class UIAdapter(ABC, Generic[RunInputT, MessageT, EventT, AgentDepsT, OutputDataT]):
    """Runs an agent for one request of a UI protocol and streams back the protocol's events.

    A protocol subclass says how to read its request body (`build_run_input`), which messages, frontend
    tools, state and tool approvals it holds, how its messages map to Edgewise messages both ways
    (`load_messages`, `dump_messages`), and which `UIEventStream` encodes the run's events. Messages a client
    sends are not trusted: see `sanitize_messages`.
    """

    agent: Any
    """The agent to run (an `Agent`, or any agent with `run_stream_events` and `output_type`)."""
    run_input: RunInputT
    """The protocol's run input, as read from the request."""
    _: KW_ONLY
    accept: str | None = None
    """The request's `Accept` header."""
    manage_system_prompt: Literal['server', 'client'] = 'server'
    """Who sets the system prompt: `'server'` (the default) drops the client's system prompts and puts the
    agent's own at the head of the conversation; `'client'` keeps the client's and adds none."""
    allowed_file_url_schemes: frozenset[str] = frozenset({'http', 'https'})
    """The URL schemes of file URLs accepted from the client; others are dropped with a warning."""
    allowed_file_url_force_download: frozenset[ForceDownloadMode] = frozenset()
    """The `force_download` values (besides `False`) accepted from the client; others are reset to `False`."""
    allow_uploaded_files: bool = False
    """Whether uploaded file references from the client are kept (they let the provider read the server's
    files: accept them only from a trusted frontend)."""
    strip_workspace_refs: bool = True
    """Whether the `workspace_ref` of the client's responses is reset to `None`: the history's last one is offered
    to the workspace capabilities' `get_workspace`, so a client could point the run at an environment reached with
    the server's credentials. Pass the workspace to continue in as `workspace=` instead."""

    @classmethod
    async def from_request(
        cls,
        request: Request,
        *,
        agent: Any,
        manage_system_prompt: Literal['server', 'client'] = 'server',
        allowed_file_url_schemes: frozenset[str] = frozenset({'http', 'https'}),
        allowed_file_url_force_download: frozenset[ForceDownloadMode] = frozenset(),
        allow_uploaded_files: bool = False,
        strip_workspace_refs: bool = True,
        allowed_content_types: frozenset[str] | None = DEFAULT_ALLOWED_CONTENT_TYPES,
        **kwargs: Any,
    ) -> Self:
        """An adapter for a Starlette request: its body read with `build_run_input`, its `Accept` header kept.

        `allowed_content_types` are the media types accepted (see `DEFAULT_ALLOWED_CONTENT_TYPES`: `application/json`,
        against cross-site request forgery); `None` accepts any, for a route your own CSRF protection covers.

        Raises:
            starlette.exceptions.HTTPException: a 415, the request's media type is not allowed.
            pydantic.ValidationError: the body is not a valid run input of the protocol.
        """
        _check_content_type(request, allowed_content_types)
        return cls(
            agent,
            cls.build_run_input(await request.body()),
            accept=request.headers.get('accept'),
            manage_system_prompt=manage_system_prompt,
            allowed_file_url_schemes=allowed_file_url_schemes,
            allowed_file_url_force_download=allowed_file_url_force_download,
            allow_uploaded_files=allow_uploaded_files,
            strip_workspace_refs=strip_workspace_refs,
            **kwargs,
        )

    @classmethod
    @abstractmethod
    def build_run_input(cls, body: bytes) -> RunInputT:
        """The protocol's run input from a request body (raises `pydantic.ValidationError` if invalid)."""
        raise NotImplementedError

    @classmethod
    @abstractmethod
    def load_messages(cls, messages: Sequence[MessageT]) -> list[ModelMessage]:
        """Edgewise messages from the protocol's messages."""
        raise NotImplementedError

    @classmethod
    def dump_messages(cls, messages: Sequence[ModelMessage]) -> list[MessageT]:
        """The protocol's messages from Edgewise messages."""
        raise NotImplementedError(f'{cls.__name__} cannot dump messages')

    @abstractmethod
    def build_event_stream(self) -> UIEventStream[RunInputT, EventT, AgentDepsT, OutputDataT]:
        """A new event stream of the protocol for this request."""
        raise NotImplementedError

    @cached_property
    @abstractmethod
    def messages(self) -> list[ModelMessage]:
        """The conversation the run input holds, as Edgewise messages (before `sanitize_messages`)."""
        raise NotImplementedError

    @cached_property
    def toolset(self) -> AbstractToolset[AgentDepsT] | None:
        """The frontend's own tools the run input declares (their calls end the run, to be run by the
        frontend), if any."""
        return None

    @cached_property
    def state(self) -> dict[str, Any] | None:
        """The frontend's state the run input holds, if any."""
        return None

    @cached_property
    def deferred_tool_results(self) -> DeferredToolResults | None:
        """The answers (approvals, denials) to deferred tool calls the run input holds, if any."""
        return None

    @cached_property
    def conversation_id(self) -> str | None:
        """The id of the conversation the run input belongs to, if the protocol has one."""
        return None

    def sanitize_messages(
        self, messages: Sequence[ModelMessage], *, deferred_tool_results: DeferredToolResults | None = None
    ) -> list[ModelMessage]:
        """The client's messages without what a client may not decide: `edgewise.agent.messages.sanitize_messages`
        (each drop or reset warned about) with the adapter's settings.

        System prompts, instruction records and `ModelRequest.instructions` are dropped when `manage_system_prompt`
        is `'server'`; file URLs and uploads are checked against `allowed_file_url_schemes`,
        `allowed_file_url_force_download` and `allow_uploaded_files`; `workspace_ref`s are reset unless
        `strip_workspace_refs` is `False`. The tool calls ending the history stay when `deferred_tool_results` answers
        them (approvals or results), so that a run waiting for them resumes.

        A `message_history` given by the server to `run_stream` is trusted and not passed through this.
        """
        resolved: set[str] = set()
        if deferred_tool_results is not None:
            resolved.update(deferred_tool_results.approvals)
            resolved.update(deferred_tool_results.calls)
        server_owned = self.manage_system_prompt == 'server'
        options = SanitizeOptions(
            strip_system_prompts=server_owned,
            strip_instructions=server_owned,
            allowed_file_url_schemes=frozenset(scheme.lower() for scheme in self.allowed_file_url_schemes),
            allowed_file_url_force_download=frozenset(self.allowed_file_url_force_download),
            allow_uploaded_files=self.allow_uploaded_files,
            strip_workspace_refs=self.strip_workspace_refs,
            resolved_tool_call_ids=frozenset(resolved),
        )
        return sanitize_untrusted(messages, options, stacklevel=2)

    def transform_stream(
        self,
        stream: AsyncIterator[NativeEvent],
        on_complete: OnCompleteFunc[EventT] | None = None,
        on_cancel: OnCancelFunc[EventT] | None = None,
    ) -> AsyncIterator[EventT]:
        """The protocol events of a run's events (see `UIEventStream.transform_stream`)."""
        return self.build_event_stream().transform_stream(stream, on_complete=on_complete, on_cancel=on_cancel)

    def encode_stream(self, stream: AsyncIterator[EventT]) -> AsyncIterator[str]:
        """Each protocol event of `stream` as the text sent for it."""
        return self.build_event_stream().encode_stream(stream)

    def streaming_response(
        self, stream: AsyncIterator[EventT], *, on_disconnect: Callable[[], None] | None = None
    ) -> StreamingResponse:
        """A Starlette response streaming the protocol events of `stream` (needs the `ui` extra); `on_disconnect`
        is called if the client goes away (see `UIEventStream.streaming_response`)."""
        return self.build_event_stream().streaming_response(stream, on_disconnect=on_disconnect)

    def run_stream_native(
        self,
        *,
        output_type: OutputSpec[Any] | None = None,
        message_history: Sequence[ModelMessage] | None = None,
        deferred_tool_results: DeferredToolResults | None = None,
        conversation_id: str | None = None,
        run_id: str | None = None,
        model: Model | KnownModelName | str | None = None,
        instructions: Any = None,
        deps: AgentDepsT = None,  # type: ignore[assignment]
        model_settings: ModelSettings | None = None,
        usage_limits: UsageLimits | None = None,
        usage: RunUsage | None = None,
        metadata: Any = None,
        infer_name: bool = True,
        toolsets: Sequence[AbstractToolset[AgentDepsT]] | None = None,
        capabilities: Sequence[AgentCapability[AgentDepsT]] | None = None,
        persistence: BaseStatePersistence[Any, Any] | None = None,
        cancellation_token: CancellationToken | None = None,
    ) -> AsyncIterator[NativeEvent]:
        """Run the agent on the run input and stream its own events (`Agent.run_stream_events`).

        The client's messages (sanitized) follow `message_history`; the run input's approvals and conversation
        id are used unless given here; the frontend's tools are added, with `DeferredToolRequests` as a
        possible output so that a call of one ends the run; the frontend's state is put into `deps` when
        they are a `StateHandler`.

        Args:
            output_type: The run's output type (default: the agent's).
            message_history: Trusted history (e.g. loaded by the server) before the client's messages.
            deferred_tool_results: Answers to deferred tool calls (default: those of the run input).
            conversation_id: The conversation's id (default: the run input's).
            run_id: Not supported: an Edgewise run's id is its persistence's (`persistence=`); must be `None`.
            model: The model of the run.
            instructions: Instructions added for the run.
            deps: The run's deps.
            model_settings: Model settings of the run.
            usage_limits: Limits of the run.
            usage: Usage to add the run's to.
            metadata: Metadata of the run.
            infer_name: Name an unnamed agent after the variable holding it.
            toolsets: Toolsets added for the run.
            capabilities: Capabilities added for the run.
            persistence: An Edgewise persistence to store the run in (a durable run).
            cancellation_token: A token whose `cancel()` cancels the run (`dispatch_request` cancels it when the
                client goes away).
        """
        if run_id is not None:
            raise UserError(
                f'`run_id={run_id!r}`: an Edgewise run takes its id from its persistence; pass `persistence=` '
                '(e.g. `SqliteStatePersistence(path, run_id=...)`) to give the run an id.'
            )
        if deferred_tool_results is None:
            deferred_tool_results = self.deferred_tool_results
        if conversation_id is None:
            conversation_id = self.conversation_id
        client_messages = self.messages
        if message_history:
            # A compaction part hides what comes before it from the model: one the client wrote would hide the
            # server's history, so only the server's own compactions count.
            client_messages = drop_compaction_parts(client_messages)
        # Sanitizing is the last change to the client's messages: it drops the tool calls left unanswered at the end,
        # which a message dropped after it could expose.
        client_messages = self.sanitize_messages(client_messages, deferred_tool_results=deferred_tool_results)
        history = [*(message_history or ()), *client_messages]
        if self.toolset is not None:
            output_type = cast(Any, [output_type or self.agent.output_type, DeferredToolRequests])
            toolsets = [*(toolsets or ()), self.toolset]
        self._put_state(deps)
        run_capabilities: list[AgentCapability[AgentDepsT]] = []
        if self.manage_system_prompt == 'server':
            run_capabilities.append(ReinjectSystemPrompt(replace_existing=True))
        run_capabilities += capabilities or ()
        options: dict[str, Any] = {
            'output_type': output_type, 'message_history': history, 'deferred_tool_results': deferred_tool_results,
            'conversation_id': conversation_id, 'model': model, 'deps': deps, 'model_settings': model_settings,
            'instructions': instructions, 'usage_limits': usage_limits, 'usage': usage, 'metadata': metadata,
            'infer_name': infer_name, 'toolsets': toolsets, 'capabilities': run_capabilities,
        }  # fmt: skip
        if persistence is not None:
            options['persistence'] = persistence
        if cancellation_token is not None:
            options['cancellation_token'] = cancellation_token
        return self._events(options)

    async def _events(self, options: dict[str, Any]) -> AsyncIterator[NativeEvent]:
        async with self.agent.run_stream_events(**options) as events:
            async for event in events:
                yield event

    def _put_state(self, deps: Any) -> None:
        if isinstance(deps, StateHandler):
            state: Any = self.state or {}
            if isinstance(deps.state, BaseModel):
                state = type(deps.state).model_validate(state)
            deps.state = state
        elif self.state:
            warnings.warn(
                f'The request holds a state, but the deps ({type(deps).__name__}) are no `StateHandler`: the '
                'state is ignored. Use `StateDeps[YourStateModel]` (or a dataclass with a `state` field) as deps.',
                UserWarning,
                stacklevel=4,
            )

    def run_stream(
        self,
        *,
        output_type: OutputSpec[Any] | None = None,
        message_history: Sequence[ModelMessage] | None = None,
        deferred_tool_results: DeferredToolResults | None = None,
        conversation_id: str | None = None,
        run_id: str | None = None,
        model: Model | KnownModelName | str | None = None,
        instructions: Any = None,
        deps: AgentDepsT = None,  # type: ignore[assignment]
        model_settings: ModelSettings | None = None,
        usage_limits: UsageLimits | None = None,
        usage: RunUsage | None = None,
        metadata: Any = None,
        infer_name: bool = True,
        toolsets: Sequence[AbstractToolset[AgentDepsT]] | None = None,
        capabilities: Sequence[AgentCapability[AgentDepsT]] | None = None,
        on_complete: OnCompleteFunc[EventT] | None = None,
        on_cancel: OnCancelFunc[EventT] | None = None,
        persistence: BaseStatePersistence[Any, Any] | None = None,
        cancellation_token: CancellationToken | None = None,
    ) -> AsyncIterator[EventT]:
        """Run the agent on the run input and stream the protocol's events: `run_stream_native` (same
        arguments) through `transform_stream` (`on_complete`, `on_cancel`)."""
        native = self.run_stream_native(
            output_type=output_type, message_history=message_history, deferred_tool_results=deferred_tool_results,
            conversation_id=conversation_id, run_id=run_id, model=model, instructions=instructions, deps=deps,
            model_settings=model_settings, usage_limits=usage_limits, usage=usage, metadata=metadata,
            infer_name=infer_name, toolsets=toolsets, capabilities=capabilities, persistence=persistence,
            cancellation_token=cancellation_token,
        )  # fmt: skip
        return self.transform_stream(native, on_complete=on_complete, on_cancel=on_cancel)

    @classmethod
    async def dispatch_request(
        cls,
        request: Request,
        *,
        agent: Any,
        message_history: Sequence[ModelMessage] | None = None,
        deferred_tool_results: DeferredToolResults | None = None,
        conversation_id: str | None = None,
        run_id: str | None = None,
        model: Model | KnownModelName | str | None = None,
        instructions: Any = None,
        deps: Any = None,
        output_type: OutputSpec[Any] | None = None,
        model_settings: ModelSettings | None = None,
        usage_limits: UsageLimits | None = None,
        usage: RunUsage | None = None,
        metadata: Any = None,
        infer_name: bool = True,
        toolsets: Sequence[AbstractToolset[Any]] | None = None,
        capabilities: Sequence[AgentCapability[Any]] | None = None,
        on_complete: OnCompleteFunc[Any] | None = None,
        on_cancel: OnCancelFunc[Any] | None = None,
        manage_system_prompt: Literal['server', 'client'] = 'server',
        allowed_file_url_schemes: frozenset[str] = frozenset({'http', 'https'}),
        allowed_file_url_force_download: frozenset[ForceDownloadMode] = frozenset(),
        allow_uploaded_files: bool = False,
        strip_workspace_refs: bool = True,
        persistence: BaseStatePersistence[Any, Any] | None = None,
        **kwargs: Any,
    ) -> Response:
        """Answer a Starlette request of the protocol: run `agent` and stream the protocol's events.

        A body that is not a valid run input gets a 422 response with the validation errors as JSON. The
        arguments are those of `from_request` (extra ones go to it) and `run_stream`. A client that goes away (an
        aborted request) cancels the run: it ends with `RunCancelled`, which `on_cancel` gets (to store the
        conversation so far). Needs the `ui` extra.
        """
        responses = starlette_module('responses', f'`{cls.__name__}.dispatch_request()`')
        try:
            adapter = await cls.from_request(
                request,
                agent=agent,
                manage_system_prompt=manage_system_prompt,
                allowed_file_url_schemes=allowed_file_url_schemes,
                allowed_file_url_force_download=allowed_file_url_force_download,
                allow_uploaded_files=allow_uploaded_files,
                strip_workspace_refs=strip_workspace_refs,
                **kwargs,
            )
        except ValidationError as error:
            try:
                body = error.json()
            except ValueError:  # a body that is not UTF-8 cannot be echoed back
                body = error.json(include_input=False)
            return cast(
                'Response',
                responses.Response(body, status_code=HTTPStatus.UNPROCESSABLE_ENTITY, media_type='application/json'),
            )
        token = CancellationToken()
        stream = adapter.run_stream(
            output_type=output_type, message_history=message_history, deferred_tool_results=deferred_tool_results,
            conversation_id=conversation_id, run_id=run_id, model=model, instructions=instructions, deps=deps,
            model_settings=model_settings, usage_limits=usage_limits, usage=usage, metadata=metadata,
            infer_name=infer_name, toolsets=toolsets, capabilities=capabilities, on_complete=on_complete,
            on_cancel=on_cancel, persistence=persistence, cancellation_token=token,
        )  # fmt: skip
        return adapter.streaming_response(stream, on_disconnect=token.cancel)
