"""The data an MCP server offers besides tools, as plain dataclasses: resources, prompts, capabilities.

Each class has `from_mcp_sdk`, which builds it from the MCP SDK's pydantic model of the same thing. The names
and fields are pydantic-ai 1.x's (`pydantic_ai.mcp.Resource`, ...); field names are snake_case where the
protocol's are camelCase (`mimeType` -> `mime_type`, `_meta` -> `metadata`).
"""

from __future__ import annotations as _annotations

from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from mcp import types as mcp_types

from .._messages.content import BinaryContent, TextContent, _repr_set

__all__ = (
    'BaseResource',
    'ContentBlock',
    'EmbeddedResource',
    'Icon',
    'Prompt',
    'PromptArgument',
    'PromptMessage',
    'PromptResult',
    'PromptRole',
    'Resource',
    'ResourceAnnotations',
    'ResourceLink',
    'ResourceTemplate',
    'ServerCapabilities',
)

PromptRole: TypeAlias = Literal['user', 'assistant']
"""Who speaks a message of a prompt."""


@dataclass(repr=False, kw_only=True)
class ResourceAnnotations:
    """Hints on a resource or a piece of content: for whom it is, how much it matters, when it changed."""

    audience: list[mcp_types.Role] | None = None
    """Who the content is meant for (`'user'`, `'assistant'`)."""
    priority: float | None = None
    """How much the content matters, from 0 (least) to 1 (most)."""
    last_modified: str | None = None
    """When the content last changed (ISO 8601), if the server says."""

    __repr__ = _repr_set

    @classmethod
    def from_mcp_sdk(cls, annotations: mcp_types.Annotations) -> ResourceAnnotations:
        """The annotations of the SDK's `Annotations` model."""
        return cls(
            audience=annotations.audience,
            priority=annotations.priority,
            # newer protocol revisions add `lastModified`; SDK versions without the field leave it out
            last_modified=getattr(annotations, 'lastModified', None),
        )


@dataclass(repr=False, kw_only=True)
class Icon:
    """An icon a user interface may show for a resource or a prompt."""

    src: str
    """Where the icon is: a URL or a `data:` URI."""
    mime_type: str | None = None
    """The icon's media type."""
    sizes: list[str] | None = None
    """The sizes the icon comes in (`'48x48'`, ...)."""

    __repr__ = _repr_set


def _icons(icons: list[mcp_types.Icon] | None) -> list[Icon] | None:
    if not icons:
        return None
    return [Icon(src=icon.src, mime_type=icon.mimeType, sizes=icon.sizes) for icon in icons]


def _mcp_annotations(annotations: mcp_types.Annotations | None) -> ResourceAnnotations | None:
    return ResourceAnnotations.from_mcp_sdk(annotations) if annotations is not None else None


@dataclass(repr=False, kw_only=True)
class BaseResource:
    """What resources and resource templates share."""

    name: str
    """The resource's name, for programs."""
    title: str | None = None
    """The resource's name, for people."""
    description: str | None = None
    """What the resource holds."""
    mime_type: str | None = None
    """The media type of the resource's content, if known."""
    annotations: ResourceAnnotations | None = None
    """Hints on the resource."""
    icons: list[Icon] | None = None
    """Icons for the resource."""
    metadata: dict[str, Any] | None = None
    """The resource's `_meta` data."""

    __repr__ = _repr_set


@dataclass(repr=False, kw_only=True)
class Resource(BaseResource):
    """A resource the server offers, read with `MCPServer.read_resource`."""

    uri: str
    """Where the resource is."""
    size: int | None = None
    """The size of the content in bytes (before base64 encoding), if known."""

    @classmethod
    def from_mcp_sdk(cls, resource: mcp_types.Resource) -> Resource:
        """The resource of the SDK's `Resource` model."""
        return cls(
            uri=str(resource.uri),
            name=resource.name,
            title=resource.title,
            description=resource.description,
            mime_type=resource.mimeType,
            size=resource.size,
            annotations=_mcp_annotations(resource.annotations),
            icons=_icons(resource.icons),
            metadata=resource.meta,
        )


@dataclass(repr=False, kw_only=True)
class ResourceTemplate(BaseResource):
    """A family of resources whose URIs follow a template (RFC 6570), such as `file:///{path}`."""

    uri_template: str
    """The URI template."""

    @classmethod
    def from_mcp_sdk(cls, template: mcp_types.ResourceTemplate) -> ResourceTemplate:
        """The template of the SDK's `ResourceTemplate` model."""
        return cls(
            uri_template=template.uriTemplate,
            name=template.name,
            title=template.title,
            description=template.description,
            mime_type=template.mimeType,
            annotations=_mcp_annotations(template.annotations),
            icons=_icons(template.icons),
            metadata=template.meta,
        )


@dataclass(repr=False, kw_only=True)
class ResourceLink:
    """A reference to a resource, in a prompt (its content is not included: read it by its URI)."""

    uri: str
    """Where the resource is."""
    name: str
    """The resource's name, for programs."""
    title: str | None = None
    """The resource's name, for people."""
    description: str | None = None
    """What the resource holds."""
    mime_type: str | None = None
    """The media type of the resource's content, if known."""
    size: int | None = None
    """The size of the content in bytes (before base64 encoding), if known."""
    annotations: ResourceAnnotations | None = None
    """Hints on the resource."""
    icons: list[Icon] | None = None
    """Icons for the resource."""
    metadata: dict[str, Any] | None = None
    """The link's `_meta` data."""
    type: Literal['resource_link'] = 'resource_link'
    """Tag of this kind of content."""

    __repr__ = _repr_set

    @classmethod
    def from_mcp_sdk(cls, link: mcp_types.ResourceLink) -> ResourceLink:
        """The link of the SDK's `ResourceLink` model."""
        return cls(
            uri=str(link.uri),
            name=link.name,
            title=link.title,
            description=link.description,
            mime_type=link.mimeType,
            size=link.size,
            annotations=_mcp_annotations(link.annotations),
            icons=_icons(link.icons),
            metadata=link.meta,
        )


@dataclass(repr=False, kw_only=True)
class EmbeddedResource:
    """A resource with its content, in a prompt."""

    uri: str
    """Where the resource is."""
    content: str | BinaryContent
    """The resource's content: text, or the decoded bytes."""
    type: Literal['resource'] = 'resource'
    """Tag of this kind of content."""
    mime_type: str | None = None
    """The media type of the content, if known."""
    annotations: ResourceAnnotations | None = None
    """Hints on the content."""
    metadata: dict[str, Any] | None = None
    """The `_meta` data of the embedding."""
    resource_metadata: dict[str, Any] | None = None
    """The `_meta` data of the resource's contents."""

    __repr__ = _repr_set

    @classmethod
    def from_mcp_sdk(cls, part: mcp_types.EmbeddedResource, content: str | BinaryContent) -> EmbeddedResource:
        """The embedded resource of the SDK's model, with its content already mapped."""
        return cls(
            uri=str(part.resource.uri),
            content=content,
            mime_type=part.resource.mimeType,
            annotations=_mcp_annotations(part.annotations),
            metadata=part.meta,
            resource_metadata=part.resource.meta,
        )


ContentBlock: TypeAlias = TextContent | BinaryContent | ResourceLink | EmbeddedResource
"""One piece of a prompt message: text, a file, a link to a resource, or a resource with its content."""


@dataclass(repr=False, kw_only=True)
class PromptArgument:
    """An argument of a prompt template."""

    name: str
    """The argument's name."""
    title: str | None = None
    """The argument's name, for people."""
    description: str | None = None
    """What the argument is for."""
    required: bool | None = None
    """Whether the argument must be given (the server decides when `None`)."""

    __repr__ = _repr_set


@dataclass(repr=False, kw_only=True)
class Prompt:
    """A prompt (or prompt template) the server offers, fetched with `MCPServer.get_prompt`."""

    name: str
    """The prompt's name, for programs."""
    title: str | None = None
    """The prompt's name, for people."""
    description: str | None = None
    """What the prompt is for."""
    arguments: list[PromptArgument] | None = None
    """The arguments the template takes."""
    icons: list[Icon] | None = None
    """Icons for the prompt."""
    metadata: dict[str, Any] | None = None
    """The prompt's `_meta` data."""

    __repr__ = _repr_set

    @classmethod
    def from_mcp_sdk(cls, prompt: mcp_types.Prompt) -> Prompt:
        """The prompt of the SDK's `Prompt` model."""
        arguments = None
        if prompt.arguments:
            arguments = [
                PromptArgument(
                    name=argument.name,
                    title=getattr(argument, 'title', None),
                    description=argument.description,
                    required=argument.required,
                )
                for argument in prompt.arguments
            ]
        return cls(
            name=prompt.name,
            title=prompt.title,
            description=prompt.description,
            arguments=arguments,
            icons=_icons(prompt.icons),
            metadata=prompt.meta,
        )


@dataclass(repr=False, kw_only=True)
class PromptMessage:
    """One message of a prompt."""

    role: PromptRole
    """Who speaks it."""
    content: ContentBlock
    """What it says."""

    __repr__ = _repr_set


@dataclass(repr=False, kw_only=True)
class PromptResult:
    """A prompt as the server renders it for the given arguments (`MCPServer.get_prompt`)."""

    messages: list[PromptMessage]
    """The prompt's messages."""
    description: str | None = None
    """What the prompt is for."""
    metadata: dict[str, Any] | None = None
    """The result's `_meta` data."""

    __repr__ = _repr_set


@dataclass(repr=False, kw_only=True)
class ServerCapabilities:
    """What an MCP server said it offers in the handshake."""

    experimental: list[str] | None = None
    """The names of the non-standard capabilities it has."""
    logging: bool = False
    """Whether it sends log messages."""
    prompts: bool = False
    """Whether it offers prompts."""
    prompts_list_changed: bool = False
    """Whether it says when its prompts change."""
    resources: bool = False
    """Whether it offers resources."""
    resources_list_changed: bool = False
    """Whether it says when its resources change."""
    tools: bool = False
    """Whether it offers tools."""
    tools_list_changed: bool = False
    """Whether it says when its tools change."""
    completions: bool = False
    """Whether it completes prompt and resource arguments."""

    __repr__ = _repr_set

    @classmethod
    def from_mcp_sdk(cls, capabilities: mcp_types.ServerCapabilities) -> ServerCapabilities:
        """The capabilities of the SDK's `ServerCapabilities` model."""
        prompts, resources, tools = capabilities.prompts, capabilities.resources, capabilities.tools
        return cls(
            experimental=list(capabilities.experimental) if capabilities.experimental else None,
            logging=capabilities.logging is not None,
            prompts=prompts is not None,
            prompts_list_changed=bool(prompts and prompts.listChanged),
            resources=resources is not None,
            resources_list_changed=bool(resources and resources.listChanged),
            tools=tools is not None,
            tools_list_changed=bool(tools and tools.listChanged),
            completions=capabilities.completions is not None,
        )
