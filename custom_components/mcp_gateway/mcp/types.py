"""The MCP messages this package sends and receives, as typed dicts.

They follow the MCP schema (2025-06-18 and 2025-11-25, plus the 2026-07-28 fields the server
core answers with: `resultType`, `inputRequests`, `requestState`, the discover result). They
type what is built and passed on; at runtime every message stays a plain dict, so the wire
form is whatever the code puts in it. What a peer sends is read as `Any` / `Mapping[str, Any]`
until it has been checked; the one exception is the content of a tool result, passed on as
the server sent it (`ToolResult.content`).

Free-form JSON stays `dict[str, Any]`: JSON Schemas, tool arguments, `structuredContent`,
`_meta`. Nothing here imports Home Assistant.
"""

from __future__ import annotations

from typing import Any, Literal, NotRequired, TypedDict, final

type RequestId = str | int
# `_meta`: free-form, its keys namespaced names (`io.modelcontextprotocol/serverInfo`).
type Meta = dict[str, Any]
type Role = Literal["user", "assistant"]

# --- JSON-RPC ---------------------------------------------------------------------------------
# Final: a message is exactly one of these, so `"id" in message` / `"error" in message` tell
# them apart for the type checker as they do at runtime.


@final
class JsonRpcRequest(TypedDict):
    """A request: it expects a response with the same id."""

    jsonrpc: Literal["2.0"]
    id: RequestId
    method: str
    params: NotRequired[dict[str, Any]]


@final
class JsonRpcNotification(TypedDict):
    """A notification: no id, no response."""

    jsonrpc: Literal["2.0"]
    method: str
    params: NotRequired[dict[str, Any]]


@final
class JsonRpcResultResponse(TypedDict):
    """A successful response (`JSONRPCResponse` in 2025-06-18).

    Its result is one of the server's, or (a plain dict) a peer's not yet checked, or a
    2026-07-28 result with the envelope's members added.
    """

    jsonrpc: Literal["2.0"]
    id: RequestId
    result: ServerResult | dict[str, Any]


class ErrorObject(TypedDict):
    """The `error` member of an error response."""

    code: int
    message: str
    data: NotRequired[Any]


@final
class JsonRpcErrorResponse(TypedDict):
    """An error response; its id is null when the request's could not be read."""

    jsonrpc: Literal["2.0"]
    id: RequestId | None
    error: ErrorObject


type JsonRpcResponse = JsonRpcResultResponse | JsonRpcErrorResponse
type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse


# --- lifecycle --------------------------------------------------------------------------------


class Implementation(TypedDict):
    """`clientInfo` / `serverInfo`."""

    name: str
    version: str
    title: NotRequired[str]


class ListChangedCapability(TypedDict):
    """A capability that may announce changes of its list."""

    listChanged: NotRequired[bool]


class ResourcesCapability(TypedDict):
    """The server's `resources` capability."""

    subscribe: NotRequired[bool]
    listChanged: NotRequired[bool]


class ServerCapabilities(TypedDict):
    """What a server declares (the members this package uses)."""

    tools: NotRequired[ListChangedCapability]
    resources: NotRequired[ResourcesCapability]
    prompts: NotRequired[ListChangedCapability]
    logging: NotRequired[dict[str, Any]]
    completions: NotRequired[dict[str, Any]]
    experimental: NotRequired[dict[str, Any]]


class InitializeParams(TypedDict):
    """The params of `initialize`."""

    protocolVersion: str
    capabilities: dict[str, Any]
    clientInfo: Implementation


class InitializeResult(TypedDict):
    """The answer to `initialize`."""

    protocolVersion: str
    capabilities: ServerCapabilities
    serverInfo: Implementation
    instructions: NotRequired[str]
    _meta: NotRequired[Meta]


class DiscoverResult(TypedDict):
    """The answer to `server/discover` (2026-07-28), before the modern envelope."""

    supportedVersions: list[str]
    capabilities: ServerCapabilities
    instructions: NotRequired[str]
    _meta: NotRequired[Meta]


class EmptyResult(TypedDict):
    """A result with nothing in it (`ping`)."""

    _meta: NotRequired[Meta]


# --- content ----------------------------------------------------------------------------------


class Annotations(TypedDict):
    """Hints on a content block or resource for the client."""

    audience: NotRequired[list[Role]]
    priority: NotRequired[float]
    lastModified: NotRequired[str]


class TextContent(TypedDict):
    """Text in a result or message."""

    type: Literal["text"]
    text: str
    annotations: NotRequired[Annotations]
    _meta: NotRequired[Meta]


class ImageContent(TypedDict):
    """An image, base64 encoded."""

    type: Literal["image"]
    data: str
    mimeType: str
    annotations: NotRequired[Annotations]
    _meta: NotRequired[Meta]


class AudioContent(TypedDict):
    """Audio, base64 encoded."""

    type: Literal["audio"]
    data: str
    mimeType: str
    annotations: NotRequired[Annotations]
    _meta: NotRequired[Meta]


class TextResourceContents(TypedDict):
    """A resource's contents as text."""

    uri: str
    text: str
    mimeType: NotRequired[str]
    _meta: NotRequired[Meta]


class BlobResourceContents(TypedDict):
    """A resource's contents as base64 encoded bytes."""

    uri: str
    blob: str
    mimeType: NotRequired[str]
    _meta: NotRequired[Meta]


type ResourceContents = TextResourceContents | BlobResourceContents


class EmbeddedResource(TypedDict):
    """A resource's contents inside a result or message."""

    type: Literal["resource"]
    resource: ResourceContents
    annotations: NotRequired[Annotations]
    _meta: NotRequired[Meta]


type ContentBlock = TextContent | ImageContent | AudioContent | ResourceLink | EmbeddedResource


# --- tools ------------------------------------------------------------------------------------


class ToolAnnotations(TypedDict):
    """Hints about a tool's behaviour (never a security boundary)."""

    title: NotRequired[str]
    readOnlyHint: NotRequired[bool]
    destructiveHint: NotRequired[bool]
    idempotentHint: NotRequired[bool]
    openWorldHint: NotRequired[bool]


class Tool(TypedDict):
    """A tool definition, as `tools/list` lists it."""

    name: str
    inputSchema: dict[str, Any]
    title: NotRequired[str]
    description: NotRequired[str]
    outputSchema: NotRequired[dict[str, Any]]
    annotations: NotRequired[ToolAnnotations]
    _meta: NotRequired[Meta]


class ListToolsResult(TypedDict):
    """The answer to `tools/list`."""

    tools: list[Tool]
    nextCursor: NotRequired[str]
    _meta: NotRequired[Meta]


class CallToolParams(TypedDict):
    """The params of `tools/call` (a continuation adds the 2026-07-28 `requestState`)."""

    name: str
    arguments: dict[str, Any]
    requestState: NotRequired[str]


class CallToolResult(TypedDict):
    """The answer to `tools/call`; `isError` marks a failure the model should read."""

    content: list[ContentBlock]
    structuredContent: NotRequired[Any]
    isError: NotRequired[bool]
    _meta: NotRequired[Meta]


# --- resources --------------------------------------------------------------------------------


class Resource(TypedDict):
    """A resource, as `resources/list` lists it."""

    uri: str
    name: str
    title: NotRequired[str]
    description: NotRequired[str]
    mimeType: NotRequired[str]
    size: NotRequired[int]
    annotations: NotRequired[Annotations]
    _meta: NotRequired[Meta]


class ResourceLink(Resource):
    """A resource the client may read, by reference: a listed resource with its type."""

    type: Literal["resource_link"]


class ResourceTemplate(TypedDict):
    """A URI template for resources."""

    uriTemplate: str
    name: str
    title: NotRequired[str]
    description: NotRequired[str]
    mimeType: NotRequired[str]
    annotations: NotRequired[Annotations]
    _meta: NotRequired[Meta]


class ListResourcesResult(TypedDict):
    """The answer to `resources/list`."""

    resources: list[Resource]
    nextCursor: NotRequired[str]
    _meta: NotRequired[Meta]


class ListResourceTemplatesResult(TypedDict):
    """The answer to `resources/templates/list`."""

    resourceTemplates: list[ResourceTemplate]
    nextCursor: NotRequired[str]
    _meta: NotRequired[Meta]


class ReadResourceResult(TypedDict):
    """The answer to `resources/read`."""

    contents: list[ResourceContents]
    _meta: NotRequired[Meta]


# --- prompts ----------------------------------------------------------------------------------


class PromptArgument(TypedDict):
    """An argument a prompt takes."""

    name: str
    title: NotRequired[str]
    description: NotRequired[str]
    required: NotRequired[bool]


class Prompt(TypedDict):
    """A prompt, as `prompts/list` lists it."""

    name: str
    title: NotRequired[str]
    description: NotRequired[str]
    arguments: NotRequired[list[PromptArgument]]
    _meta: NotRequired[Meta]


class ListPromptsResult(TypedDict):
    """The answer to `prompts/list`."""

    prompts: list[Prompt]
    nextCursor: NotRequired[str]
    _meta: NotRequired[Meta]


class PromptMessage(TypedDict):
    """One message of a prompt."""

    role: Role
    content: ContentBlock


class GetPromptResult(TypedDict):
    """The answer to `prompts/get`."""

    messages: list[PromptMessage]
    description: NotRequired[str]
    _meta: NotRequired[Meta]


# --- elicitation ------------------------------------------------------------------------------

type ElicitAction = Literal["accept", "decline", "cancel"]
type ElicitValue = str | int | float | bool | list[str]


class StringSchema(TypedDict):
    """A text field of an elicitation form."""

    type: Literal["string"]
    title: NotRequired[str]
    description: NotRequired[str]
    minLength: NotRequired[int]
    maxLength: NotRequired[int]
    format: NotRequired[Literal["email", "uri", "date", "date-time"]]
    default: NotRequired[str]


class NumberSchema(TypedDict):
    """A number field of an elicitation form."""

    type: Literal["number", "integer"]
    title: NotRequired[str]
    description: NotRequired[str]
    minimum: NotRequired[float]
    maximum: NotRequired[float]
    default: NotRequired[float]


class BooleanSchema(TypedDict):
    """A checkbox of an elicitation form."""

    type: Literal["boolean"]
    title: NotRequired[str]
    description: NotRequired[str]
    default: NotRequired[bool]


class EnumSchema(TypedDict):
    """A single choice of an elicitation form (the untitled form; `enumNames` is legacy)."""

    type: Literal["string"]
    enum: list[str]
    title: NotRequired[str]
    description: NotRequired[str]
    enumNames: NotRequired[list[str]]
    default: NotRequired[str]


type PrimitiveSchemaDefinition = StringSchema | NumberSchema | BooleanSchema | EnumSchema


class ElicitRequestedSchema(TypedDict):
    """An elicitation form: a flat object of primitive fields."""

    type: Literal["object"]
    properties: dict[str, PrimitiveSchemaDefinition]
    required: NotRequired[list[str]]


class ElicitRequestParams(TypedDict):
    """The params of `elicitation/create` in form mode (`mode` left out: it is the default,
    and 2025-06-18 clients know no other)."""

    message: str
    requestedSchema: ElicitRequestedSchema
    mode: NotRequired[Literal["form"]]


class ElicitRequest(TypedDict):
    """`elicitation/create` as a JSON-RPC request (the legacy eras, over a stream)."""

    jsonrpc: Literal["2.0"]
    id: RequestId
    method: Literal["elicitation/create"]
    params: ElicitRequestParams


# The requests this server sends its clients: elicitation only.
type ServerRequest = ElicitRequest


class ElicitResult(TypedDict):
    """The person's answer: the form's content only when accepted."""

    action: ElicitAction
    content: NotRequired[dict[str, ElicitValue]]
    _meta: NotRequired[Meta]


# --- multi round-trip requests (2026-07-28) -------------------------------------------------


class ElicitInputRequest(TypedDict):
    """An elicitation asked inside an `input_required` result: a request without id."""

    method: Literal["elicitation/create"]
    params: ElicitRequestParams


class InputRequiredResult(TypedDict):
    """A call's answer while it waits for the client's input: retried with `requestState`
    and `inputResponses` (by the keys of `inputRequests`)."""

    resultType: Literal["input_required"]
    inputRequests: dict[str, ElicitInputRequest]
    requestState: str
    _meta: NotRequired[Meta]


# Every result this package's server answers a request with.
type ServerResult = (
    EmptyResult
    | InitializeResult
    | DiscoverResult
    | ListToolsResult
    | CallToolResult
    | ListResourcesResult
    | ListResourceTemplatesResult
    | ReadResourceResult
    | ListPromptsResult
    | GetPromptResult
    | InputRequiredResult
)
