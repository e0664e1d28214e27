"""GatewayHandler: the MCP server core's view of Home Assistant.

It decides, per request and per HA user, which tools exist, runs them, and turns every failure
that is not a protocol error into an `isError` result the AI can read and act on.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
import json
import logging
from typing import Any, Final

from homeassistant.auth.models import User
from homeassistant.core import HomeAssistant

from ..backends.base import BackendRuntime, ToolClass, ToolTier, UnknownListing
from ..core.const import CONF_BACKEND
from ..core.settings import gateway_settings
from ..mcp import codec
from ..mcp.client import ToolResult
from ..mcp.errors import (
    McpAuthError,
    McpConnectionError,
    McpError,
    McpRateLimitError,
    McpResponseTooLargeError,
    McpRpcError,
    McpTimeoutError,
    McpToolError,
)
from ..mcp.server import (
    FORBIDDEN_CODE,
    InvalidParamsError,
    McpServerError,
    RequestContext,
    ResourceNotFoundError,
    UnknownToolError,
)
from ..mcp.types import (
    CallToolResult,
    ContentBlock,
    GetPromptResult,
    Prompt,
    ReadResourceResult,
    Resource,
    Tool,
)
from ..permissions.exposure import (
    CallerView,
    require_assistant_call,
    require_exposed_entities,
)
from ..permissions.policy import (
    PermissionDenied,
    allowed_tiers,
    async_record_write,
    may_use_gateway,
    require_confirmation,
    require_tier,
)
from .approval.gate import async_approve
from .approval.rules import ApprovalReason, backend_reason, call_effect, unmapped_devices
from .catalog.gateway_tool import (
    checked_arguments,
    full_tool_name,
    gateway_tool_definition,
    kind_tool_definition,
    listed_names,
)
from .catalog.ranking import first_line, rank_hits
from .catalog.schemas.convert import restore_arguments
from .catalog.schemas.validate import lift_single_items, schema_errors
from .catalog.store import (
    BackendCatalog,
    BackendTool,
    CoreTool,
    ExposedBackend,
    GatewayCatalog,
    ToolFailure,
    backend_entries,
    catalog_listing,
    gateway_tool_names,
)
from .replies import devices_phrase, note_unavailable
from .tools.changes import ChangeWatch, with_changes
from .tools.confirm_calls import async_confirmed
from .tools.ha_tools import HA_TOOLS
from .tools.resources import async_read_resource, list_resources

_LOGGER = logging.getLogger(__name__)

# The most a gateway call to a backend waits in all; the backend's configured request timeout
# (its client's) bounds it further: catalog refresh and call together, never one after another.
BACKEND_CALL_TIMEOUT: Final = 65.0
DEFAULT_SEARCH_LIMIT: Final = 5
MAX_SEARCH_LIMIT: Final = 20

SEARCH_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "What you want to do, in plain words."},
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_SEARCH_LIMIT,
            "description": f"Results (default {DEFAULT_SEARCH_LIMIT}).",
        },
        "schemas": {
            "type": "boolean",
            "description": "true: every result with its input schema (default: the best only).",
        },
    },
    "required": ["query"],
    "additionalProperties": False,
}


def allow_non_admin(hass: HomeAssistant) -> bool:
    """The gateway-wide option (the gateway entry's, else the default: allowed)."""
    return gateway_settings(hass).allow_non_admin


def tool_result(
    data: dict[str, Any], *, is_error: bool = False, structured: bool = False
) -> CallToolResult:
    """A CallToolResult carrying its data once: compact JSON as text.

    Every client at every protocol version reads text content, and it is what models are
    shown; `structuredContent` (since 2025-06-18) is required only of a tool that declares an
    `outputSchema`, which then SHOULD repeat it as text. The gateway's tools declare none, so
    the text is their one encoding; `structured=True` is for a tool that does.
    """
    result: CallToolResult = {
        "content": [{"type": "text", "text": _compact(data)}],
        "isError": is_error,
    }
    if structured:
        result["structuredContent"] = data
    return result


def _compact(data: Any) -> str:
    # orjson where it gives json's answer (mcp/codec.py): a whole-home get_state is ~80 KB.
    return codec.dumps(data).decode()


def error_result(message: str, code: str = "failed", **details: Any) -> CallToolResult:
    """An `isError` result the AI can read."""
    return tool_result(ToolFailure(message, code=code, **details).as_structured(), is_error=True)


class GatewayHandler:
    """Implements the server core's ServerHandler over Home Assistant and the backends."""

    def __init__(self, hass: HomeAssistant) -> None:
        self.hass = hass
        self.catalog = GatewayCatalog.get(hass)
        search = CoreTool(
            name="search_tools",
            title="Search tools",
            description=(
                "Find tools by what they do, across the core tools and every backend: one line "
                "per match, best first."
            ),
            input_schema=SEARCH_SCHEMA,
            tier=ToolTier.READ,
            read_only=True,
            run=self._async_search,
        )
        self.core_tools: dict[str, CoreTool] = {tool.name: tool for tool in (search, *HA_TOOLS)}

    # --- ServerHandler ---------------------------------------------------------------------

    async def list_tools(self, ctx: RequestContext) -> list[Tool]:
        """Core tools and gateway tools this user may use; the rest is absent."""
        user = self._user(ctx)
        if not self._admitted(user):
            return []
        tiers = allowed_tiers(user)
        tools = [tool.definition() for tool in self.core_tools.values() if tool.tier in tiers]
        everything = await self.catalog.async_visible(user)
        listed = listed_names([backend for backend, _, _ in everything])
        kinds: dict[str, list[tuple[ExposedBackend, bool, list[BackendTool]]]] = {}
        for backend, backend_catalog, visible in everything:
            # An unreachable backend stays listed so the AI can learn why it fails.
            if not visible and backend_catalog is not None:
                continue
            if listed[backend.gateway_name][1] is not None:
                kinds.setdefault(backend.kind, []).append(
                    (backend, backend_catalog is not None, visible)
                )
                continue
            tools.append(
                gateway_tool_definition(backend, visible, catalog_known=backend_catalog is not None)
            )
        tools.extend(kind_tool_definition(kind, members) for kind, members in kinds.items())
        return tools

    async def call_tool(
        self, ctx: RequestContext, name: str, arguments: dict[str, Any]
    ) -> CallToolResult:
        """Run a core or gateway tool; a tool the user may not use is a clear error result."""
        user = self._user(ctx)
        if not self._admitted(user):
            return error_result(
                "This Home Assistant's MCP gateway is limited to administrators.",
                code="forbidden",
            )
        if (core := self.core_tools.get(name)) is not None:
            return await self._call_core(ctx, user, core, arguments)
        backend, refusal = self._entry_of(name, arguments)
        if backend is None:
            if refusal is None:
                raise UnknownToolError(name)
            return error_result(refusal, code="invalid")
        arguments = {key: value for key, value in arguments.items() if key != "entry"}
        return await self._call_gateway(ctx, user, backend, arguments)

    def _entry_of(
        self, name: str, arguments: Mapping[str, Any]
    ) -> tuple[ExposedBackend | None, str | None]:
        """The one exposed entry a gateway call reaches, else why not (None: no such tool).

        An entry's own name reaches that entry; a kind's name (listed when the kind has several
        exposed entries, and kept callable for clients with an older list) takes `entry`,
        resolved exactly as its listing names them. An `entry` naming another, unknown or
        withdrawn entry is refused, never replaced by a guess; without one, a kind's name
        reaches its entry only when the kind has no other entry at all.
        """
        backends = self.catalog.exposed_backends()
        entry = arguments.get("entry")
        own = next((b for b in backends if b.gateway_name == name), None)
        members = [b for b in backends if b.kind == name] or ([own] if own else [])
        if not members:
            return None, None
        if entry is None:
            if own is not None and len(members) == 1:
                return own, None
            if own is None and len(members) == 1 and len(self._kind_entries(name)) == 1:
                return members[0], None
        else:
            entry_id = _named_entry(self._kind_entries(members[0].kind), entry)
            found = next((b for b in members if b.entry.entry_id == entry_id), None)
            if found is not None:
                return found, None
        known = ", ".join(b.gateway_name for b in members)
        if entry is None:
            return None, f'Give "entry", one of: {known}.'
        return None, f"{name} has no entry {entry!r} you can reach; its entries: {known}."

    def _kind_entries(self, kind: str) -> dict[str, tuple[str, str]]:
        """Every entry of a backend kind, exposed or withdrawn, loaded or not: its id →
        (gateway name, title)."""
        entries = backend_entries(self.hass)
        names = gateway_tool_names(entries)
        return {
            entry.entry_id: (names[entry.entry_id], entry.title or "")
            for entry in entries
            if entry.data.get(CONF_BACKEND) == kind
        }

    async def list_resources(self, ctx: RequestContext) -> list[Resource]:
        """The guide and the context snapshot."""
        return list_resources() if self._admitted(self._user(ctx)) else []

    async def read_resource(self, ctx: RequestContext, uri: str) -> ReadResourceResult:
        """A resource's contents, filtered for the user."""
        user = self._user(ctx)
        if not self._admitted(user):
            raise McpServerError(
                FORBIDDEN_CODE, "This Home Assistant's MCP gateway is limited to administrators."
            )
        result = await async_read_resource(self.hass, user, uri)
        if result is None:
            raise ResourceNotFoundError(uri)
        return result

    async def list_prompts(self, ctx: RequestContext) -> list[Prompt]:
        """No prompts: the guide resource covers usage."""
        self._user(ctx)
        return []

    async def get_prompt(
        self, ctx: RequestContext, name: str, arguments: dict[str, Any]
    ) -> GetPromptResult:
        """There are no prompts."""
        raise InvalidParamsError(f"Unknown prompt: {name}")

    # --- helpers ---------------------------------------------------------------------------

    @staticmethod
    def _user(ctx: RequestContext) -> User:
        if not isinstance(ctx.user, User):
            # The view authenticates every request; reaching here without a user is a bug.
            raise McpServerError(FORBIDDEN_CODE, "No Home Assistant user for this request.")
        return ctx.user

    def _admitted(self, user: User) -> bool:
        return may_use_gateway(user, allow_non_admin(self.hass))

    async def _call_core(
        self, ctx: RequestContext, user: User, tool: CoreTool, arguments: dict[str, Any]
    ) -> CallToolResult:
        try:
            require_tier(user, tool.tier, tool.name)
        except PermissionDenied as err:
            return error_result(str(err), code=err.code)
        arguments = lift_single_items(tool.input_schema, arguments)
        if errors := schema_errors(tool.input_schema, arguments):
            return error_result(f"Invalid arguments: {'; '.join(errors)}.", code="invalid")
        if tool.prepare is not None:
            # Targets resolved first, the approval decided on them, and the tool runs them.
            prepared = tool.prepare(self.hass, user, arguments)
            arguments = prepared.arguments
            if prepared.approval is not None and (
                refused := await self._approved(
                    ctx,
                    user,
                    tool.name,
                    arguments,
                    ApprovalReason(prepared.approval, prepared.entity_ids),
                )
            ):
                return refused
        try:
            data = await tool.run(self.hass, ctx, arguments)
        except ToolFailure as err:
            return tool_result(err.as_structured(), is_error=True)
        return tool_result(data)

    async def _async_search(
        self, hass: HomeAssistant, ctx: RequestContext, args: dict[str, Any]
    ) -> dict[str, Any]:
        user: User = ctx.user
        tiers = allowed_tiers(user)
        core = [tool for tool in self.core_tools.values() if tool.tier in tiers]
        visible = await self.catalog.async_visible(user)
        index, refs = self.catalog.search_index(user, core, visible)
        listed = listed_names([backend for backend, _, _ in visible])
        subs: dict[tuple[str, str], BackendTool] = {
            (backend.gateway_name, tool.name): tool
            for backend, _, tools in visible
            for tool in tools
        }
        limit = args.get("limit") or DEFAULT_SEARCH_LIMIT
        hits = rank_hits(index, refs, subs, args["query"], limit, core=self.core_tools)
        results = []
        for position, (gateway, name) in enumerate(hits):
            with_schema = position == 0 or bool(args.get("schemas"))
            if gateway is None:
                core_tool = self.core_tools[name]
                item: dict[str, Any] = {
                    "tool": name,
                    "about": first_line(core_tool.description),
                    "tier": str(core_tool.tier),
                }
                if with_schema:
                    item["inputSchema"] = core_tool.input_schema
                results.append(item)
                continue
            sub = subs[(gateway, name)]
            item = {
                "tool": name,
                "gateway": gateway,
                "about": first_line(sub.description) or sub.title,
                "tier": str(sub.tool_class.tier),
            }
            if sub.tool_class.destructive:
                item["destructive"] = True
            # A kind with several entries is listed as one tool that takes the entry: every
            # hit of such a kind says which, as its entry's own name is not in tools/list.
            tool_name, entry = listed.get(gateway, (gateway, None))
            if with_schema:
                item["inputSchema"] = sub.input_schema
            if with_schema or entry is not None:
                takes = bool(sub.input_schema.get("properties"))
                call: dict[str, Any] = {} if entry is None else {"entry": entry}
                call |= {"tool": name, "args": "{...}" if takes else "{}"}
                if sub.tool_class.destructive:
                    call["confirm"] = True
                item["call"] = {"name": tool_name, "arguments": call}
            results.append(item)
        return {"query": args["query"], "count": len(results), "results": results}

    async def _call_gateway(
        self,
        ctx: RequestContext,
        user: User,
        backend: ExposedBackend,
        arguments: dict[str, Any],
    ) -> CallToolResult:
        """A gateway tool call: checked arguments, the backend's catalog, then a listing of
        its tools, or one tool authorized, run and (a write) recorded."""
        try:
            arguments = checked_arguments(arguments)
            runtime, backend_catalog, deadline = await self._connect(backend)
            arguments = _full_names(arguments, backend_catalog.tools)
            name = arguments.get("tool")
            sub = None if name is None else backend_catalog.tools.get(name)
            if sub is None:
                return _listing(user, backend, backend_catalog, arguments)
            call = self._authorize(user, backend, runtime, sub, arguments)
        except ToolFailure as err:
            return tool_result(err.as_structured(), is_error=True)
        except PermissionDenied as err:
            return error_result(str(err), code=err.code)
        if call.approval is not None:
            refused = await self._approved(
                ctx, user, call.what, call.args, call.approval, tier=call.tool_class.tier
            )
            if refused is not None:
                return refused
        write = call.tool_class.tier is not ToolTier.READ
        # A scene or rule run says nothing of what it did: the answer lists what changed.
        watch = ChangeWatch(self.hass, user) if runtime.runs_actions(call.name, call.args) else None
        try:
            result = await self._execute(
                backend, runtime, call.name, call.args, deadline, write=write
            )
            if watch is not None and not result.get("isError"):
                result = with_changes(result, await watch.async_settle([runtime]))
            if write:  # what the devices report, not the backend's count of what it did
                result = await async_confirmed(runtime, call.name, call.args, result)
        finally:
            if watch is not None:
                watch.stop()
        if runtime.lists_devices(call.name) and not result.get("isError"):
            result = self._filtered(user, backend, runtime, call.name, result)
        return self._record(ctx, user, backend, call, result)

    async def _approved(
        self,
        ctx: RequestContext,
        user: User,
        tool: str,
        arguments: Mapping[str, Any],
        reason: ApprovalReason,
        *,
        tier: ToolTier = ToolTier.CONTROL,
    ) -> CallToolResult | None:
        """None once a person approved this very call (the approval is then used up), else
        the result that says it waits, was declined or expired; nothing has run."""
        refusal = await async_approve(
            self.hass, ctx, user, tool=tool, arguments=arguments, reason=reason, tier=tier
        )
        if refusal is None:
            return None
        return error_result(refusal.message, code=refusal.code, **refusal.details)

    def _filtered(
        self,
        user: User,
        backend: ExposedBackend,
        runtime: BackendRuntime,
        name: str,
        result: CallToolResult,
    ) -> CallToolResult:
        """A listing's answer with only what the caller may read and what is exposed, and a
        note of how much was withheld; an answer the backend cannot filter is refused."""
        answer = ToolResult(result.get("content", []), result.get("structuredContent"))
        try:
            data, withheld = runtime.filter_listing(
                name, answer.data, CallerView(self.hass, user, runtime)
            )
        except UnknownListing:
            return error_result(
                f"{backend.entry.title} answered {name} in a form the gateway cannot filter "
                "for this user's permissions and exposure, so it is withheld.",
                code="forbidden",
            )
        if withheld and isinstance(data, dict):
            data["_gateway"] = {
                "withheld": withheld,
                "note": f"{withheld} item(s) this user may not read, or not exposed to "
                "assistants, were left out.",
            }
        return tool_result(data) if isinstance(data, dict) else tool_result({"result": data})

    async def _connect(
        self, backend: ExposedBackend
    ) -> tuple[BackendRuntime, BackendCatalog, float]:
        """The backend's runtime and catalog, and the deadline the whole call keeps."""
        runtime = backend.runtime
        bound = BACKEND_CALL_TIMEOUT
        if runtime is not None:
            bound = min(bound, runtime.client.timeout)
        deadline = asyncio.get_running_loop().time() + bound
        # Most calls find the catalog cached: no timer for them.
        backend_catalog = None if runtime is None else self.catalog.fresh_catalog(backend, runtime)
        try:
            if backend_catalog is None:
                async with asyncio.timeout_at(deadline):
                    backend_catalog = await self.catalog.async_backend_catalog(backend)
        except TimeoutError as err:
            raise ToolFailure(
                f"{backend.entry.title} did not answer in time ({bound:g} s).", code="timeout"
            ) from err
        if runtime is None or backend_catalog is None:
            raise ToolFailure(
                f"{backend.entry.title} is not connected right now; see list_backends.",
                code="unavailable",
            )
        return runtime, backend_catalog, deadline

    def _authorize(
        self,
        user: User,
        backend: ExposedBackend,
        runtime: BackendRuntime,
        sub: BackendTool,
        arguments: Mapping[str, Any],
    ) -> AuthorizedCall:
        """The call's class by its arguments, then every check (raises PermissionDenied)."""
        args: dict[str, Any] = restore_arguments(sub.raw_input_schema, arguments.get("args", {}))
        what = f"{backend.gateway_name}/{sub.name}"
        tool_class = runtime.call_class(sub.tool_class, sub.name, args)
        # The tier before the confirmation: a caller who may not use the tool learns that.
        require_tier(user, tool_class.tier, what)
        require_confirmation(tool_class, arguments, what)
        try:
            # Assistants reach only the devices HA exposes to them, and change only exposed
            # entities; a listing is filtered after the call instead (_filtered).
            addressed = require_assistant_call(
                self.hass,
                user,
                runtime,
                tool_class=tool_class,
                name=sub.name,
                args=args,
                what=what,
            )
            # What the call changes, entity by entity, by the backend's word.
            changes, stored, effect = call_effect(self.hass, runtime, sub.name, args, addressed)
            if tool_class.tier is not ToolTier.READ:
                require_exposed_entities(
                    self.hass, user, [change.entity_id for change in changes], what
                )
        except PermissionDenied as err:
            hint = runtime.refusal_hint(sub.name, args)
            if hint is None:
                raise
            raise PermissionDenied(f"Permission denied: {what} {hint}", err.reason) from err
        entity_ids = sorted(e for group in addressed.values() for e in group)
        # Weighed on every tier: the settings may name a read tool that needs a person.
        approval = backend_reason(
            self.hass,
            gateway_settings(self.hass),
            title=backend.entry.title,
            name=sub.name,
            tool_class=tool_class,
            changes=changes,
            stored=stored,
            effect=effect,
            unmapped=unmapped_devices(runtime, sub.name, args, addressed),
        )
        if tool_class.tier is ToolTier.READ:
            # No logbook line for a read: its naming is not worked out.
            return AuthorizedCall(sub.name, args, tool_class, what, entity_ids, approval=approval)
        # The logbook names single entities a call acts on (an alarm, the HSM panel) rather
        # than their whole device, and links the line to one of them where there is one.
        singles = [
            addressed[key]
            for _, key in runtime.entity_keys_in_call(sub.name, args)
            if addressed.get(key)
        ]
        # What the backend names (the alarm a snooze reaches) says more than its device.
        subject = runtime.call_subject(sub.name, args)
        named = singles or ([] if subject else list(addressed.values()))
        entity_ids_named = [e for group in named for e in group]
        return AuthorizedCall(
            sub.name,
            args,
            tool_class,
            what,
            entity_ids,
            devices_phrase(self.hass, named, subject),
            entity_ids_named[0] if len(entity_ids_named) == 1 else None,
            approval,
        )

    def _record(
        self,
        ctx: RequestContext,
        user: User,
        backend: ExposedBackend,
        call: AuthorizedCall,
        result: CallToolResult,
    ) -> CallToolResult:
        """A write's result, noted where HA sees its devices offline, and its logbook line."""
        if call.tool_class.tier is ToolTier.READ:
            return result
        result = note_unavailable(self.hass, result, call.entity_ids)
        # Arguments stay out of the logbook: they may hold codes or file contents.
        async_record_write(
            self.hass,
            user=user,
            client_name=ctx.client_name,
            tool=call.what,
            summary=f"{backend.entry.title}: {call.name}{call.phrase}",
            success=not result.get("isError", False),
            backend=backend.gateway_name,
            entity_id=call.logbook_entity,
        )
        return result

    async def _execute(
        self,
        backend: ExposedBackend,
        runtime: BackendRuntime,
        name: str,
        args: dict[str, Any],
        deadline: float,
        *,
        write: bool,
    ) -> CallToolResult:
        """Call the backend; every failure becomes an `isError` result that says what happened.

        A write whose request may have reached the backend before the connection failed or
        the time ran out is reported as of unknown outcome, never as not run.
        """
        title = backend.entry.title
        try:
            async with asyncio.timeout_at(deadline):
                result = await runtime.async_call_tool(name, args)
        except McpToolError as err:
            if isinstance(err.result, ToolResult):
                tool = err.result
                return _passthrough(tool.content, tool.structured, True)
            return error_result(f"{title} failed on {name}: {err}", code="backend_error")
        except (TimeoutError, McpTimeoutError) as err:
            if write and getattr(err, "may_have_run", True):
                return _outcome_unknown(title, name, "did not answer it in time")
            return error_result(f"{title} did not answer {name} in time.", code="timeout")
        except McpAuthError:
            return error_result(
                f"{title} refused the gateway's credentials; re-authenticate the entry in Home "
                "Assistant.",
                code="backend_auth",
            )
        except McpRateLimitError as err:
            return error_result(
                f"{title} is rate limiting; retry in "
                f"{f'{err.retry_after:g}' if err.retry_after else 'a few'} seconds.",
                code="rate_limited",
            )
        except McpConnectionError as err:
            if write and err.may_have_run:
                return _outcome_unknown(title, name, f"lost the connection ({err})")
            return error_result(f"{title} is unreachable: {err}", code="unavailable")
        except McpResponseTooLargeError as err:
            return error_result(
                f"{title} answered {name} with more than {err.limit // (1024 * 1024)} MiB, the "
                "most the gateway settings let it read; the answer was dropped, but the tool "
                "ran. Ask for less at once (a filter, a smaller page).",
                code="answer_too_large",
                limit_bytes=err.limit,
            )
        except McpRpcError as err:
            return error_result(
                f"{title} rejected {name}: {err.message}",
                code="rejected",
                rpc_code=err.code,
                data=err.data,
            )
        except McpError as err:
            return error_result(f"{title} failed on {name}: {err}", code="backend_error")
        except Exception:  # a backend bug must not look like a gateway protocol failure
            _LOGGER.exception("Calling %s on %s failed", name, backend.gateway_name)
            return error_result(f"{title} failed on {name} (see the Home Assistant log).")
        return _passthrough(result.content, result.structured, result.is_error)


def _outcome_unknown(title: str, name: str, what: str) -> CallToolResult:
    """The result of a write sent to the backend whose answer never came."""
    return error_result(
        f"{name} was sent to {title}, which then {what}: it may have run. Read the state "
        "before trying again.",
        code="outcome_unknown",
        may_have_run=True,
    )


@dataclass(frozen=True, slots=True)
class AuthorizedCall:
    """A backend tool call the caller may make, and the entities it addresses."""

    name: str
    args: dict[str, Any]
    tool_class: ToolClass
    what: str
    entity_ids: list[str]
    # For the logbook: " on <names>" of what it acts on, and the one entity to link.
    phrase: str = ""
    logbook_entity: str | None = None
    # Why it waits for a person (None: it does not).
    approval: ApprovalReason | None = None


def _named_entry(entries: Mapping[str, tuple[str, str]], entry: Any) -> str | None:
    """The id of the entry `entry` names: by gateway name or entry id, else by a title no
    other entry of the kind shares (None: it names none, or more than one)."""
    if not isinstance(entry, str):
        return None
    wanted = entry.strip().casefold()
    for entry_id, (gateway_name, _) in entries.items():
        if wanted in (gateway_name.casefold(), entry_id.casefold()):
            return entry_id
    titled = [entry_id for entry_id, (_, title) in entries.items() if title.casefold() == wanted]
    return titled[0] if len(titled) == 1 else None


def _listing(
    user: User,
    backend: ExposedBackend,
    backend_catalog: BackendCatalog,
    arguments: Mapping[str, Any],
) -> CallToolResult:
    """The user's tools of a backend with their schemas: all, or those `describe` names.

    A `tool` or described name that is no tool of this user's raises ToolFailure naming theirs.
    """
    # Only a listing (or a wrong name) needs the user's whole view of the catalog.
    tiers = allowed_tiers(user)
    visible = {t.name: t for t in backend_catalog.tools.values() if t.tool_class.tier in tiers}
    name = arguments.get("tool")
    asked: list[str] | None = arguments.get("describe") if name is None else [name]
    if unknown := [n for n in asked or () if n not in visible]:
        raise ToolFailure(
            f"{backend.gateway_name} has no tool {', '.join(map(repr, unknown))}"
            f" for you. Its tools: {', '.join(visible) or 'none for you'}.",
            code="unknown_tool",
        )
    if "args" in arguments:
        raise ToolFailure('Give "tool" with "args".', code="invalid")
    listed = [visible[n] for n in dict.fromkeys(asked)] if asked else visible.values()
    return tool_result(
        {
            "gateway": backend.gateway_name,
            "backend": backend.kind,
            **catalog_listing(list(listed)),
        }
    )


def _full_names(arguments: dict[str, Any], tools: Mapping[str, Any]) -> dict[str, Any]:
    """`tool` and `describe` with the backend's own names, also where the listing's short
    form was used (gateway_tool.tool_listing)."""
    if (name := arguments.get("tool")) is not None:
        arguments["tool"] = full_tool_name(tools, name)
    if (names := arguments.get("describe")) is not None:
        arguments["describe"] = [full_tool_name(tools, item) for item in names]
    return arguments


def _passthrough(
    content: Sequence[ContentBlock], structured: Any, is_error: bool
) -> CallToolResult:
    """The backend's result, its data carried once.

    Text content is what every client reads, so it always goes through; the backend's
    `structuredContent` goes too only when it says more than the text (a backend's error
    codes ride there beside a plain message), never as a second copy of the same JSON.
    A result with structuredContent but no content gets it as compact text instead.
    """
    parts = list(content)
    result: CallToolResult = {"content": parts, "isError": is_error}
    if structured is None:
        return result
    texts = [part.get("text") for part in parts if part.get("type") == "text"]
    if not parts:
        parts.append({"type": "text", "text": _compact(structured)})
    elif not (len(texts) == 1 and _same_json(texts[0], structured)):
        result["structuredContent"] = structured
    return result


def _same_json(text: Any, structured: Any) -> bool:
    if not isinstance(text, str) or not text.lstrip().startswith(("{", "[")):
        return False
    try:
        return bool(json.loads(text) == structured)
    except ValueError:
        return False
