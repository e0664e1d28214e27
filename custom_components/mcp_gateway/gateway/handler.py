"""GatewayHandler: the MCP server core's view of Home Assistant.

It decides, per request and per HA user, which tools exist, runs them, and turns every failure
that is not a protocol error into an `isError` result the AI can read and act on. A gateway
tool's call to a backend runs the steps of `calls/` in order, approval between its checks and
its run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from homeassistant.auth.models import User
from homeassistant.core import HomeAssistant

from ..core.settings import gateway_settings
from ..framework.base import ToolTier
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
    GetPromptResult,
    Prompt,
    ReadResourceResult,
    Resource,
    Tool,
)
from ..permissions.policy import PermissionDenied, allowed_tiers, may_use_gateway, require_tier
from .approval.gate import async_approve
from .approval.rules import ApprovalReason
from .calls.audit import record
from .calls.authorize import authorize
from .calls.entries import entry_of
from .calls.execute import async_connect, async_execute
from .calls.filtering import filtered
from .calls.listing import full_names, listing
from .calls.results import error_result, tool_result
from .catalog.gateway_tool import (
    checked_arguments,
    gateway_tool_definition,
    kind_tool_definition,
    listed_names,
)
from .catalog.schemas.validate import lift_single_items, schema_errors
from .catalog.search_tool import search_tool
from .catalog.store import BackendTool, CoreTool, ExposedBackend, GatewayCatalog, ToolFailure
from .tools.changes import ChangeWatch, with_changes
from .tools.confirm_calls import async_confirmed
from .tools.ha_tools import HA_TOOLS
from .tools.resources import async_read_resource, list_resources


def allow_non_admin(hass: HomeAssistant) -> bool:
    """The gateway-wide option (the gateway entry's, else the default: allowed)."""
    return gateway_settings(hass).allow_non_admin


class GatewayHandler:
    """Implements the server core's ServerHandler over Home Assistant and the backends."""

    def __init__(self, hass: HomeAssistant) -> None:
        self.hass = hass
        self.catalog = GatewayCatalog.get(hass)
        # search_tools finds every core tool, itself too: it reads the table it is added to.
        self.core_tools: dict[str, CoreTool] = {}
        for tool in (search_tool(self.catalog, self.core_tools), *HA_TOOLS):
            self.core_tools[tool.name] = tool

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
        backend, refusal = entry_of(self.hass, self.catalog.exposed_backends(), name, arguments)
        if backend is None:
            if refusal is None:
                raise UnknownToolError(name)
            return error_result(refusal, code="invalid")
        arguments = {key: value for key, value in arguments.items() if key != "entry"}
        return await self._call_gateway(ctx, user, backend, arguments)

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
            runtime, backend_catalog, deadline = await async_connect(self.catalog, backend)
            arguments = full_names(arguments, backend_catalog.tools)
            name = arguments.get("tool")
            sub = None if name is None else backend_catalog.tools.get(name)
            if sub is None:
                return listing(user, backend, backend_catalog, arguments)
            call = authorize(self.hass, user, backend, runtime, sub, arguments=arguments)
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
            result = await async_execute(
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
            result = filtered(self.hass, user, backend, runtime, call.name, result=result)
        return record(self.hass, ctx, user, backend, call, result=result)

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
