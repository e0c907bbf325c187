"""Tools the model provider runs on its own servers ("native" tools, called "builtin" before pydantic-ai 1.107):
web search, code execution, URL fetching, image generation, memory, remote MCP servers, file search.

Give them to an agent as `Agent(builtin_tools=[WebSearchTool()])` (the pydantic-ai 1.x spelling) or per run;
the model receives them in `ModelRequestParameters.native_tools` and maps each to its API's own tool. A model
whose API has no such tool raises `UserError` naming it, unless the tool is marked `optional=True`. What the
provider's tool did comes back in the response as `NativeToolCallPart` / `NativeToolReturnPart`.

Each class documents the providers that honour each of its fields; fields a provider does not take are not sent.
Options only one provider has go in a tool's `provider_settings`, keyed by the provider that reads them
(`WebSearchTool(provider_settings={'openrouter': {'engine': 'exa'}})`), as in pydantic-ai 2.68; the typed dicts
below (`OpenRouterWebSearchToolSettings`, ...) name them. The fields 2.68 moved there (`WebFetchTool.enable_citations`,
`ImageGenerationTool.quality`, ...) still work; set both, they must agree.

`ToolSearchTool` (the provider's own search over deferred tools) lives in `edgewise.agent.native_tools._tool_search`,
as in pydantic-ai, and is registered here like the others.
"""

from __future__ import annotations as _annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from typing_extensions import TypedDict, deprecated

from ..exceptions import UserError
from ._base import NATIVE_TOOL_TYPES, AbstractNativeTool

__all__ = (
    'AbstractNativeTool',
    'AnthropicWebSearchToolSettings',
    'OpenRouterWebSearchToolSettings',
    'WebSearchProviderSettings',
    'AnthropicWebFetchToolSettings',
    'WebFetchProviderSettings',
    'OpenAIImageGenerationToolSettings',
    'ImageGenerationProviderSettings',
    'XaiFileSearchToolSettings',
    'FileSearchProviderSettings',
    'AdvisorModelName',
    'AnthropicAdvisorToolSettings',
    'OpenRouterAdvisorToolSettings',
    'AdvisorProviderSettings',
    'AdvisorTool',
    'provider_setting',
    'WebSearchTool',
    'WebSearchUserLocation',
    'XSearchTool',
    'CodeExecutionTool',
    'WebFetchTool',
    'UrlContextTool',
    'ImageGenerationModelName',
    'ImageGenerationTool',
    'ImageAspectRatio',
    'ImageSize',
    'ImageQuality',
    'MemoryTool',
    'MCPServerTool',
    'FileSearchTool',
    'NATIVE_TOOL_TYPES',
    'DEPRECATED_NATIVE_TOOLS',
    'SUPPORTED_NATIVE_TOOLS',
    'NATIVE_TOOLS_REQUIRING_CONFIG',
)

ImageAspectRatio = Literal['21:9', '16:9', '4:3', '3:2', '1:1', '9:16', '3:4', '2:3', '5:4', '4:5']
"""The aspect ratios image generation tools accept."""

ImageSize = Literal['auto', '1024x1024', '1024x1536', '1536x1024', '512', '1K', '2K', '4K']
"""The sizes image generation tools accept: pixels for OpenAI Responses, `'512'` to `'4K'` for Gemini image models."""

ImageQuality = Literal['low', 'medium', 'high', 'xhigh', 'max', 'auto']
"""The quality levels of OpenAI's image generation, sent as given (`'xhigh'` and `'max'`: the newer image models
only; older ones reject them)."""

ImageGenerationModelName = Literal['gpt-image-2', 'gpt-image-1.5', 'gpt-image-1', 'gpt-image-1-mini'] | str
"""An OpenAI image model: one of the known names, or any other model id."""


def provider_setting(tool: AbstractNativeTool, system: str, name: str, default: Any = None) -> Any:
    """The option `name` of `tool` for the provider `system`: from its `provider_settings`, else `default` (the
    value of the field the option moved from, for the fields pydantic-ai 2.68 moved)."""
    settings: Mapping[str, Any] = (getattr(tool, 'provider_settings', None) or {}).get(system) or {}
    return settings.get(name, default)


def _check_moved(tool: AbstractNativeTool, system: str, moved: Mapping[str, tuple[object, object]]) -> None:
    """Refuse a moved field set to something other than what `provider_settings` says for it.

    `moved` maps each field to its value and its default.
    """
    nested: Mapping[str, Any] = (getattr(tool, 'provider_settings', None) or {}).get(system) or {}
    for name, (value, default) in moved.items():
        if value != default and name in nested and nested[name] != value:
            raise UserError(
                f'`{type(tool).__name__}` field `{name}` conflicts with `provider_settings["{system}"]["{name}"]`; '
                'set only `provider_settings`.'
            )


class AnthropicWebSearchToolSettings(TypedDict, total=False):
    """Anthropic's own options of a `WebSearchTool`."""

    response_inclusion: Literal['full', 'excluded']
    """Whether results that code execution consumes are also shown to the model (`'excluded'`: only to the code);
    used when the request also has a `CodeExecutionTool`."""


class OpenRouterWebSearchToolSettings(TypedDict, total=False):
    """OpenRouter's own options of a `WebSearchTool` (its `web` plugin takes `engine` and `max_results`)."""

    engine: Literal['auto', 'native', 'exa', 'firecrawl', 'parallel', 'perplexity'] | str
    """The search engine."""
    mode: str
    """The search mode of OpenRouter's server tool (not read by the `web` plugin Edgewise sends)."""
    max_results: int
    """The most results."""
    max_total_results: int
    """The most results over all searches of a request (not read by the `web` plugin)."""
    max_characters: int
    """The most characters of each result (not read by the `web` plugin)."""


class WebSearchProviderSettings(TypedDict, total=False):
    """The provider-only options of a `WebSearchTool`, by provider."""

    anthropic: AnthropicWebSearchToolSettings
    openrouter: OpenRouterWebSearchToolSettings


class AnthropicWebFetchToolSettings(TypedDict, total=False):
    """Anthropic's own options of a `WebFetchTool`."""

    enable_citations: bool
    """Cite the fetched content in the answer."""
    max_content_tokens: int
    """The most tokens of a fetched page given to the model."""
    use_cache: bool
    """Whether a page may come from Anthropic's cache (`False`: always fetched live)."""
    response_inclusion: Literal['full', 'excluded']
    """Whether pages that code execution consumes are also shown to the model (with a `CodeExecutionTool`)."""


class WebFetchProviderSettings(TypedDict, total=False):
    """The provider-only options of a `WebFetchTool`, by provider."""

    anthropic: AnthropicWebFetchToolSettings


class OpenAIImageGenerationToolSettings(TypedDict, total=False):
    """OpenAI's own options of an `ImageGenerationTool` (the Responses API's `image_generation` tool)."""

    action: Literal['generate', 'edit', 'auto']
    background: Literal['transparent', 'opaque', 'auto']
    input_fidelity: Literal['high', 'low']
    moderation: Literal['auto', 'low']
    model: ImageGenerationModelName
    partial_images: int
    quality: ImageQuality


class ImageGenerationProviderSettings(TypedDict, total=False):
    """The provider-only options of an `ImageGenerationTool`, by provider."""

    openai: OpenAIImageGenerationToolSettings


class XaiFileSearchToolSettings(TypedDict, total=False):
    """xAI's own options of a `FileSearchTool` (Edgewise has no xAI model that reads them: kept so specs load)."""

    instructions: str
    retrieval_mode: Literal['hybrid', 'semantic', 'keyword']


class FileSearchProviderSettings(TypedDict, total=False):
    """The provider-only options of a `FileSearchTool`, by provider."""

    xai: XaiFileSearchToolSettings


@dataclass(kw_only=True)
class WebSearchTool(AbstractNativeTool):
    """Lets the model search the web.

    Supported by Anthropic, OpenAI Responses, OpenAI Chat search models (`*-search-preview`), Google, Groq,
    xAI and OpenRouter.
    """

    search_context_size: Literal['low', 'medium', 'high'] = 'medium'
    """How much context the search gathers for the answer (OpenAI Responses and Chat, OpenRouter)."""

    user_location: WebSearchUserLocation | None = None
    """Where the user is, to localize the results (Anthropic, OpenAI)."""

    blocked_domains: list[str] | None = None
    """Domains never to show in the results (Anthropic, Groq, xAI). Anthropic takes this or `allowed_domains`,
    not both."""

    allowed_domains: list[str] | None = None
    """The only domains to show in the results (Anthropic, OpenAI Responses, Groq, xAI)."""

    max_uses: int | None = None
    """The most searches the model may run in one response (Anthropic)."""

    external_web_access: bool | None = None
    """Whether the search may fetch pages live (`False`: cached or indexed results only; `None`: the provider's
    default). OpenAI Responses only."""

    provider_settings: WebSearchProviderSettings | None = None
    """Options only one provider has, by provider (Anthropic, OpenRouter)."""

    kind: str = 'web_search'
    """The kind of tool."""


class WebSearchUserLocation(TypedDict, total=False):
    """Where the user is, for web results near them (Anthropic, OpenAI)."""

    city: str
    """The user's city."""

    country: str
    """The user's country (a two-letter code such as `'US'` for OpenAI)."""

    region: str
    """The user's region or state."""

    timezone: str
    """The user's IANA time zone, e.g. `'Europe/Paris'`."""


@dataclass(kw_only=True)
class XSearchTool(AbstractNativeTool):
    """Lets the model search posts on X (xAI)."""

    allowed_x_handles: list[str] | None = None
    """Only posts of these handles (at most 10)."""

    excluded_x_handles: list[str] | None = None
    """No posts of these handles (at most 10)."""

    from_date: datetime | None = None
    """Only posts made at or after this time (naive times are UTC)."""

    to_date: datetime | None = None
    """Only posts made at or before this time (naive times are UTC)."""

    enable_image_understanding: bool = False
    """Let the model look at the images of posts."""

    enable_video_understanding: bool = False
    """Let the model look at the videos of posts."""

    include_output: bool = False
    """Return the raw search results as a `NativeToolReturnPart`, not only the model's summary."""

    kind: str = 'x_search'
    """The kind of tool."""

    def __post_init__(self) -> None:
        if self.allowed_x_handles is not None and self.excluded_x_handles is not None:
            raise ValueError('Cannot specify both allowed_x_handles and excluded_x_handles')
        if self.allowed_x_handles and len(self.allowed_x_handles) > 10:
            raise ValueError('allowed_x_handles cannot contain more than 10 handles')
        if self.excluded_x_handles and len(self.excluded_x_handles) > 10:
            raise ValueError('excluded_x_handles cannot contain more than 10 handles')


@dataclass(kw_only=True)
class CodeExecutionTool(AbstractNativeTool):
    """Lets the model run code in the provider's sandbox (Anthropic, OpenAI Responses, Google, Bedrock, xAI)."""

    kind: str = 'code_execution'
    """The kind of tool."""


@dataclass(kw_only=True)
class WebFetchTool(AbstractNativeTool):
    """Lets the model read the pages at URLs (Anthropic `web_fetch`, Google `url_context`)."""

    max_uses: int | None = None
    """The most fetches in one response (Anthropic)."""

    allowed_domains: list[str] | None = None
    """The only domains to fetch from (Anthropic; this or `blocked_domains`, not both)."""

    blocked_domains: list[str] | None = None
    """Domains never to fetch from (Anthropic; this or `allowed_domains`, not both)."""

    enable_citations: bool = False
    """Cite the fetched content in the answer (Anthropic)."""

    max_content_tokens: int | None = None
    """The most tokens of a fetched page given to the model (Anthropic)."""

    provider_settings: WebFetchProviderSettings | None = None
    """Options only one provider has, by provider (Anthropic; `enable_citations` and `max_content_tokens` may go
    there too, as in pydantic-ai 2.68)."""

    kind: str = 'web_fetch'
    """The kind of tool."""

    def __post_init__(self) -> None:
        _check_moved(
            self,
            'anthropic',
            {'enable_citations': (self.enable_citations, False), 'max_content_tokens': (self.max_content_tokens, None)},
        )


@deprecated('Use `WebFetchTool` instead.')
@dataclass(kw_only=True)
class UrlContextTool(WebFetchTool):
    """The old name of `WebFetchTool`, kept so that stored tools of kind `'url_context'` still load."""

    kind: str = 'url_context'
    """The kind of tool (the old one)."""


@dataclass(kw_only=True)
class ImageGenerationTool(AbstractNativeTool):
    """Lets the model draw images (OpenAI Responses `image_generation`, Google image models)."""

    action: Literal['generate', 'edit', 'auto'] = 'auto'
    """Draw a new image, edit a given one, or let the model choose (OpenAI Responses)."""

    background: Literal['transparent', 'opaque', 'auto'] = 'auto'
    """The image's background; `'transparent'` needs the png or webp format (OpenAI Responses)."""

    input_fidelity: Literal['high', 'low'] | None = None
    """How closely to keep the style and faces of input images (OpenAI Responses; the API's default is low)."""

    moderation: Literal['auto', 'low'] = 'auto'
    """How strict the moderation of the image is (OpenAI Responses)."""

    model: ImageGenerationModelName | None = None
    """The image model the tool uses, not the agent's model (OpenAI Responses)."""

    output_compression: int | None = None
    """Compression of jpeg or webp output, 0 to 100 (OpenAI Responses; Vertex AI for jpeg)."""

    output_format: Literal['png', 'webp', 'jpeg'] | None = None
    """The image's file format (OpenAI Responses; Vertex AI)."""

    partial_images: int = 0
    """How many partial images to stream, 0 to 3 (OpenAI Responses)."""

    quality: ImageQuality = 'auto'
    """The image's quality (OpenAI Responses)."""

    size: ImageSize | None = None
    """The image's size: pixels for OpenAI Responses, `'512'` to `'4K'` for Gemini image models."""

    aspect_ratio: ImageAspectRatio | None = None
    """The image's aspect ratio (Gemini image models; OpenAI Responses maps 1:1, 2:3 and 3:2 to sizes)."""

    provider_settings: ImageGenerationProviderSettings | None = None
    """Options only one provider has, by provider (OpenAI: `action`, `background`, `input_fidelity`, `moderation`,
    `model`, `partial_images` and `quality` may go there, as in pydantic-ai 2.68)."""

    kind: str = 'image_generation'
    """The kind of tool."""

    def __post_init__(self) -> None:
        _check_moved(
            self,
            'openai',
            {
                'action': (self.action, 'auto'),
                'background': (self.background, 'auto'),
                'input_fidelity': (self.input_fidelity, None),
                'moderation': (self.moderation, 'auto'),
                'model': (self.model, None),
                'partial_images': (self.partial_images, 0),
                'quality': (self.quality, 'auto'),
            },
        )


@dataclass(kw_only=True)
class MemoryTool(AbstractNativeTool):
    """Lets the model keep notes between conversations (Anthropic `memory`; the agent answers its calls with a
    function tool named `memory`)."""

    kind: str = 'memory'
    """The kind of tool."""


@dataclass(kw_only=True)
class MCPServerTool(AbstractNativeTool):
    """Lets the provider call the tools of a remote MCP server itself (OpenAI Responses, Anthropic, xAI).

    Several can be sent at once: each is told apart by its `id`.
    """

    id: str
    """The server's name in the request and in the tool parts (`mcp_server:<id>`)."""

    url: str
    """The server's URL; for OpenAI, `x-openai-connector:<connector_id>` names one of OpenAI's connectors."""

    authorization_token: str | None = None
    """The token the provider sends to the server (OpenAI Responses, Anthropic, xAI)."""

    description: str | None = None
    """What the server is for (OpenAI Responses, xAI)."""

    allowed_tools: list[str] | None = None
    """The only tools of the server the model may call (OpenAI Responses, Anthropic, xAI)."""

    headers: dict[str, str] | None = None
    """More HTTP headers for the server (OpenAI Responses, xAI)."""

    kind: str = 'mcp_server'
    """The kind of tool."""

    @property
    def unique_id(self) -> str:
        """`mcp_server:<id>`."""
        return f'{self.kind}:{self.id}'

    @property
    def label(self) -> str:
        """`MCP: <id>`."""
        return f'MCP: {self.id}'

    def __repr__(self) -> str:
        # The token and the headers may hold secrets.
        hidden = ('authorization_token', 'headers')
        shown = ', '.join(
            f'{name}={"***" if name in hidden and value else repr(value)}'
            for name, value in vars(self).items()
            if not name.startswith('_')
        )
        return f'MCPServerTool({shown})'


@dataclass(kw_only=True)
class FileSearchTool(AbstractNativeTool):
    """Lets the model search files uploaded to the provider (OpenAI vector stores, Gemini file search stores,
    xAI collections)."""

    file_store_ids: Sequence[str]
    """The stores to search."""

    provider_settings: FileSearchProviderSettings | None = None
    """Options only one provider has, by provider (xAI's; no Edgewise model reads them)."""

    kind: str = 'file_search'
    """The kind of tool."""


AdvisorModelName = (
    Literal[
        'claude-fable-5-2',
        'claude-opus-5-5',
        'claude-sonnet-5-5',
        'claude-haiku-5-5',
        'claude-opus-4-8',
        'claude-sonnet-4-6',
    ]
    | str
)
"""An advisor model: an Anthropic model id (on Anthropic), or an OpenRouter catalog slug (on OpenRouter)."""


class AnthropicAdvisorToolSettings(TypedDict, total=False):
    """Anthropic's own options of an `AdvisorTool`."""

    caching: Literal['5m', '1h']
    """Cache the advisor's context for this long."""


class OpenRouterAdvisorToolSettings(TypedDict, total=False):
    """OpenRouter's own options of an `AdvisorTool`."""

    forward_transcript: bool
    """Whether the advisor sees the whole conversation (default `False`)."""


class AdvisorProviderSettings(TypedDict, total=False):
    """The provider-only options of an `AdvisorTool`, by provider."""

    anthropic: AnthropicAdvisorToolSettings
    openrouter: OpenRouterAdvisorToolSettings


@dataclass(kw_only=True)
class AdvisorTool(AbstractNativeTool):
    """Lets a fast model consult a stronger advisor model while it answers (Anthropic, OpenRouter).

    The provider checks that the two models go together.
    """

    model: AdvisorModelName
    """The advisor model."""

    max_uses: int | None = None
    """The most consultations in one request (Anthropic; OpenRouter has a fixed limit)."""

    max_tokens: int | None = None
    """The most tokens of each piece of advice, at least 1,024 (Anthropic `max_tokens`, OpenRouter
    `max_completion_tokens`)."""

    caching: Literal['5m', '1h'] | None = None
    """Cache the advisor's context for this long (Anthropic). pydantic-ai 2.68 moved it to
    `provider_settings['anthropic']['caching']`; both work, and must agree."""

    provider_settings: AdvisorProviderSettings | None = None
    """Options only one provider has, by provider."""

    kind: str = 'advisor'
    """The kind of tool."""

    def __post_init__(self) -> None:
        _check_moved(self, 'anthropic', {'caching': (self.caching, None)})
        if self.max_tokens is not None and self.max_tokens < 1024:
            raise ValueError('AdvisorTool.max_tokens must be at least 1024')


# Defined in its own module (as in pydantic-ai); importing it here registers its `kind` in `NATIVE_TOOL_TYPES`.
from . import _tool_search as _tool_search  # noqa: E402

DEPRECATED_NATIVE_TOOLS: frozenset[type[AbstractNativeTool]] = frozenset({UrlContextTool})  # pyright: ignore[reportDeprecated]
"""Native tool classes kept only for old data; not to be offered in new interfaces."""

SUPPORTED_NATIVE_TOOLS: frozenset[type[AbstractNativeTool]] = frozenset(
    tool for tool in NATIVE_TOOL_TYPES.values() if tool not in DEPRECATED_NATIVE_TOOLS
)
"""The native tool classes of this module, without the deprecated ones."""

NATIVE_TOOLS_REQUIRING_CONFIG: frozenset[type[AbstractNativeTool]] = frozenset(
    {FileSearchTool, MCPServerTool, MemoryTool, _tool_search.ToolSearchTool}
)
"""Native tools that cannot be offered without settings of the user's (stores, servers, a memory backend)."""
