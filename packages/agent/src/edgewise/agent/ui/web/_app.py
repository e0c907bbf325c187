"""The chat app: the page, its assets and the JSON API it talks to."""

from __future__ import annotations as _annotations

import base64
import functools
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any, Literal

import anyio
import httpx
from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.alias_generators import to_camel
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from ...capabilities import NativeTool
from ...exceptions import UserError
from ...models import KnownModelName, Model, infer_model
from ...native_tools import SUPPORTED_NATIVE_TOOLS, AbstractNativeTool
from ...settings import ModelSettings
from ...tools import DeferredToolResults
from .._page_urls import DEFAULT_HTML_URL, OFFLINE_HTML_URL
from ..vercel_ai import VercelAIAdapter, VercelAIEventStream
from ..vercel_ai.request_types import (
    SubmitMessage,
    ToolApprovalRequested,
    ToolApprovalRequestedPart,
    ToolInputAvailablePart,
    UIMessagePart,
)
from ._durable import ChatPersistence, chat_persistence, continue_events, latest_turn, turn_run_id
from ._hosts import HostCheck, host_pattern

__all__ = ('SDK_VERSION', 'ModelsParam', 'build_app')

ModelsParam = Sequence[Model | KnownModelName | str] | Mapping[str, Model | KnownModelName | str] | None
"""The models offered in the page: names or models, or a dict of them by the label shown."""

SDK_VERSION: Literal[6] = 6
"""The Vercel AI SDK version whose stream the page reads (6: with tool approvals)."""

_JSON = 'application/json'
_ASSETS = {'chat.js': 'text/javascript; charset=utf-8', 'chat.css': 'text/css; charset=utf-8'}
# The bundled page loads nothing but its own files, and may not be framed by another site.
_PAGE_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


class _Camel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


class ModelInfo(_Camel):
    """A model offered in the page."""

    id: str
    name: str
    builtin_tools: list[str]


class ToolInfo(_Camel):
    """A native tool the page can switch on."""

    id: str
    name: str


class _ChatOptions(_Camel):
    model_config = ConfigDict(extra='ignore', alias_generator=to_camel)
    model: str | None = None
    builtin_tools: list[str] = []


@dataclass
class _Chat:
    agent: Any
    models: dict[str, Model | str] = field(default_factory=dict)
    infos: list[ModelInfo] = field(default_factory=list)
    tools: list[AbstractNativeTool] = field(default_factory=list)
    deps: Any = None
    model_settings: ModelSettings | None = None
    instructions: str | None = None
    persistence: ChatPersistence | None = None
    page: bytes | None = None
    page_source: str | Path | None = None

    def offer_models(self, models: ModelsParam) -> None:
        offered: list[tuple[str | None, Model | str]] = []
        if self.agent.model is not None:
            offered.append((None, self.agent.model))
        if isinstance(models, Mapping):
            offered += list(models.items())
        else:
            offered += [(None, m) for m in models or ()]
        for label, ref in offered:
            model = infer_model(ref)
            model_id = ref if isinstance(ref, str) else model.label
            if model_id in self.models:
                continue
            supported = model.profile.get('supported_native_tools', SUPPORTED_NATIVE_TOOLS)
            tool_ids = [t.unique_id for t in self.tools if type(t) in supported]
            self.models[model_id] = ref
            self.infos.append(ModelInfo(id=model_id, name=label or model.label, builtin_tools=tool_ids))

    async def page_bytes(self) -> bytes:
        if self.page is None:
            source = self.page_source
            if isinstance(source, str) and source.startswith(('http://', 'https://')):
                async with httpx.AsyncClient() as client:
                    response = await client.get(source)
                    response.raise_for_status()
                    self.page = response.content
            else:
                assert source is not None
                self.page = await (await anyio.Path(source).expanduser()).read_bytes()
        return self.page

    async def index(self, request: Request) -> Response:
        if self.page_source is None or self.page_source == DEFAULT_HTML_URL:
            page = _asset('index.html')
            headers = {'content-security-policy': _PAGE_POLICY, 'cache-control': 'no-cache'}
        elif self.page_source == OFFLINE_HTML_URL:
            return await self.offline_page(request)
        else:
            page = await self.page_bytes()
            headers = {'cache-control': 'no-cache'}
        return Response(page, media_type='text/html; charset=utf-8', headers=headers)

    async def offline_page(self, request: Request) -> Response:
        page, policy = _self_contained_page()
        headers = {'content-security-policy': policy, 'cache-control': 'no-cache'}
        return Response(page, media_type='text/html; charset=utf-8', headers=headers)

    async def asset(self, request: Request) -> Response:
        name = request.path_params['name']
        if name not in _ASSETS:
            return JSONResponse({'error': f'No asset {name!r}.'}, status_code=404)
        return Response(_asset(name), media_type=_ASSETS[name], headers={'cache-control': 'no-cache'})

    async def configure(self, request: Request) -> Response:
        tools = [ToolInfo(id=t.unique_id, name=t.label) for t in self.tools]
        body = {
            'models': [m.model_dump(by_alias=True) for m in self.infos],
            'builtinTools': [t.model_dump(by_alias=True) for t in tools],
            'durable': self.persistence is not None,
        }
        return JSONResponse(body)

    async def health(self, request: Request) -> Response:
        return JSONResponse({'ok': True})

    async def preflight(self, request: Request) -> Response:
        # No `Access-Control-Allow-*` header: a browser then refuses every cross-site request that needs a
        # preflight, and a JSON body (required by `chat`) needs one.
        return Response()

    async def stored_chat(self, request: Request) -> Response:
        chat_id = request.path_params['chat_id']
        if self.persistence is None:
            return JSONResponse({'error': 'Chats are not stored: the app was made without `persistence=`.'}, 404)
        try:
            turn = await latest_turn(self.agent, self.persistence, chat_id)
        except UserError as error:
            return JSONResponse({'error': str(error)}, status_code=400)
        if turn is None:
            return JSONResponse({'error': f'No stored chat {chat_id!r}.'}, status_code=404)
        await turn.persistence.aclose()
        # Calls without a result are shown waiting for approval only when the run waits for theirs (a turn cut
        # short has calls without results too).
        messages = VercelAIAdapter.dump_messages(turn.messages, sdk_version=5)
        for message in messages:
            message.parts = [_asking(part, turn.approvals) for part in message.parts]
        return JSONResponse(
            {
                'id': chat_id,
                'runId': turn_run_id(chat_id, turn.number),
                'status': turn.status,
                'messages': [m.model_dump(mode='json', by_alias=True, exclude_none=True) for m in messages],
            }
        )

    async def chat(self, request: Request) -> Response:
        media_type = request.headers.get('content-type', '').split(';')[0].strip().lower()
        if media_type != _JSON:
            # A cross-site form or `fetch` without a preflight cannot send JSON: refused before anything runs.
            return JSONResponse(
                {'error': f'The chat endpoint takes `Content-Type: {_JSON}`, not {media_type or "none"!r}.'}, 415
            )
        try:
            adapter: VercelAIAdapter[Any, Any] = await VercelAIAdapter.from_request(
                request, agent=self.agent, sdk_version=SDK_VERSION
            )
        except ValidationError as error:
            return Response(error.json(include_input=False), status_code=422, media_type=_JSON)
        try:
            options = _ChatOptions.model_validate(adapter.run_input.__pydantic_extra__ or {})
        except ValidationError as error:
            return Response(error.json(include_input=False), status_code=422, media_type=_JSON)
        if options.model is not None and options.model not in self.models:
            return JSONResponse({'error': f'Model {options.model!r} is not one of the models offered.'}, 400)
        offered = {t.unique_id: t for t in self.tools}
        unknown = [t for t in options.builtin_tools if t not in offered]
        if unknown:
            return JSONResponse({'error': f'Native tools {unknown} are not among those offered.'}, 400)
        model = self.models.get(options.model) if options.model else None
        capabilities = [NativeTool(offered[t]) for t in options.builtin_tools]
        if self.persistence is not None:
            return await self._durable_chat(adapter, model, capabilities)
        stream = adapter.run_stream(
            model=model,
            capabilities=capabilities,
            deps=self.deps,
            model_settings=self.model_settings,
            instructions=self.instructions,
        )
        return adapter.streaming_response(stream)

    async def _durable_chat(
        self, adapter: VercelAIAdapter[Any, Any], model: Model | str | None, capabilities: list[Any]
    ) -> Response:
        assert self.persistence is not None
        request_data = adapter.run_input
        try:
            turn = await latest_turn(self.agent, self.persistence, request_data.id)
        except UserError as error:
            return JSONResponse({'error': str(error)}, status_code=400)
        last = request_data.messages[-1] if request_data.messages else None
        stream_of: VercelAIEventStream[Any, Any] = adapter.build_event_stream()
        if turn is not None and turn.status == 'running':  # a turn on it would start from a part of its history
            await turn.persistence.aclose()
            return JSONResponse(
                {
                    'error': f'Turn {turn.number} of chat {request_data.id!r} is still running: wait for its answer '
                    'before sending a new message. Nothing was changed.'
                },
                status_code=409,
            )
        if turn is not None and turn.status == 'waiting':
            if last is not None and last.role == 'user':
                await turn.persistence.aclose()
                return JSONResponse(
                    {
                        'error': f'Turn {turn.number} of chat {request_data.id!r} has not finished (it waits for '
                        'tool approvals, or was cut short): answer or continue it before sending a new message.'
                    },
                    status_code=409,
                )
            # Only the answers to the calls the run waits for, and all of them: a run continued with others keeps
            # them stored and fails every later continuation.
            given = adapter.deferred_tool_results
            answers = {k: v for k, v in (given.approvals if given else {}).items() if k in turn.approvals}
            missing = sorted(turn.approvals - answers.keys())
            if missing:
                await turn.persistence.aclose()
                return JSONResponse(
                    {
                        'error': f'Turn {turn.number} of chat {request_data.id!r} waits for the approval of tool calls '
                        f'{", ".join(missing)}: answer each of them. Nothing was changed.'
                    },
                    status_code=409,
                )
            events = continue_events(
                self.agent,
                turn.persistence,
                deps=self.deps,
                model=model,
                model_settings=self.model_settings,
                deferred_tool_results=DeferredToolResults(approvals=answers) if answers else None,
            )
            return _streamed(stream_of, stream_of.transform_stream(events), turn.persistence)
        if last is None or last.role != 'user':
            if turn is not None:
                await turn.persistence.aclose()
            return JSONResponse({'error': "Nothing to answer: the last message of the chat is not the user's."}, 400)
        history = turn.messages if turn is not None else []
        number = turn.number + 1 if turn is not None else 1
        if turn is not None:
            await turn.persistence.aclose()
        # Only the user's new message is read from the client: the history is the stored one.
        new_turn = VercelAIAdapter[Any, Any](
            self.agent, SubmitMessage(id=request_data.id, messages=[last]), sdk_version=SDK_VERSION
        )
        persistence = self.persistence(turn_run_id(request_data.id, number))
        stream = new_turn.run_stream(
            message_history=history,
            model=model,
            capabilities=capabilities,
            deps=self.deps,
            model_settings=self.model_settings,
            instructions=self.instructions,
            persistence=persistence,
        )
        return _streamed(stream_of, stream, persistence)


def _streamed(stream_of: VercelAIEventStream[Any, Any], chunks: Any, persistence: Any) -> Response:
    async def body() -> Any:
        try:
            async for text in stream_of.encode_stream(chunks):
                yield text
        finally:
            await persistence.aclose()

    return StreamingResponse(body(), headers=stream_of.response_headers, media_type=stream_of.content_type)


def _asking(part: UIMessagePart, approvals: frozenset[str]) -> UIMessagePart:
    if isinstance(part, ToolInputAvailablePart) and part.tool_call_id in approvals:
        fields = part.model_dump(exclude={'state', 'approval'})
        return ToolApprovalRequestedPart(**fields, approval=ToolApprovalRequested(id=part.tool_call_id))
    return part


def _asset(name: str) -> bytes:
    return files(__package__ or 'edgewise.agent.ui.web').joinpath('static', name).read_bytes()


_STYLESHEET_TAG = '<link rel="stylesheet" href="/assets/chat.css">'
_SCRIPT_TAG = '<script src="/assets/chat.js" defer></script>'


@functools.cache  # (the package's files do not change while it runs: made once, at the first request)
def _self_contained_page() -> tuple[bytes, str]:
    """The page with its styles and script inlined (the script at the end of the body, where the deferred one ran),
    and a policy that lets exactly those run, by their hashes."""
    page = _asset('index.html').decode()
    style, script = _asset('chat.css').decode(), _asset('chat.js').decode()
    if _STYLESHEET_TAG not in page or _SCRIPT_TAG not in page or '</script' in script.lower():
        raise RuntimeError('The packaged chat page cannot be inlined: its files do not have the expected shape.')
    page = page.replace(_STYLESHEET_TAG, f'<style>{style}</style>').replace(_SCRIPT_TAG, '')
    page = page.replace('</body>', f'<script>{script}</script>\n</body>')
    policy = _PAGE_POLICY.replace("script-src 'self'", f'script-src {_csp_hash(script)}').replace(
        "style-src 'self'", f'style-src {_csp_hash(style)}'
    )
    return page.encode(), policy


def _csp_hash(source: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode()).digest()).decode() + "'"


def build_app(
    agent: Any,
    *,
    models: ModelsParam = None,
    native_tools: Sequence[AbstractNativeTool] | None = None,
    deps: Any = None,
    model_settings: ModelSettings | None = None,
    instructions: str | None = None,
    html_source: str | Path | None = None,
    allowed_hosts: Sequence[str] | None = None,
    persistence: str | ChatPersistence | None = None,
) -> Starlette:
    """The chat app (see `create_web_app`)."""
    hosts = [host_pattern(p) for p in allowed_hosts or ()]
    chat = _Chat(
        agent,
        tools=list(native_tools or ()),
        deps=deps,
        model_settings=model_settings,
        instructions=instructions,
        persistence=chat_persistence(persistence) if persistence is not None else None,
        page_source=html_source,
    )
    chat.offer_models(models)
    routes = [
        Route('/', chat.index, methods=['GET']),
        Route('/assets/{name}', chat.asset, methods=['GET']),
        Route('/api/chat', chat.preflight, methods=['OPTIONS']),
        Route('/api/chat', chat.chat, methods=['POST']),
        Route('/api/chats/{chat_id}', chat.stored_chat, methods=['GET']),
        Route('/api/configure', chat.configure, methods=['GET']),
        Route('/api/health', chat.health, methods=['GET']),
        Route(OFFLINE_HTML_URL, chat.offline_page, methods=['GET']),
        Route('/{chat_id}', chat.index, methods=['GET']),
    ]
    return Starlette(routes=routes, middleware=[Middleware(HostCheck, allowed_hosts=hosts)])
