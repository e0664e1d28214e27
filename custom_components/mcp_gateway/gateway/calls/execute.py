"""A backend call run: the backend's runtime and catalog within the call's deadline, then the
call, every failure an `isError` result that says what happened."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Final

from ...framework.base import BackendRuntime
from ...mcp.client import ToolResult
from ...mcp.errors import (
    McpAuthError,
    McpConnectionError,
    McpError,
    McpRateLimitError,
    McpResponseTooLargeError,
    McpRpcError,
    McpTimeoutError,
    McpToolError,
)
from ...mcp.types import CallToolResult
from ..catalog.store import BackendCatalog, ExposedBackend, GatewayCatalog, ToolFailure
from .results import error_result, passthrough

_LOGGER = logging.getLogger(__name__)

# The most a gateway call to a backend waits in all; the backend's configured request timeout
# (its client's) bounds it further: catalog refresh and call together, never one after another.
BACKEND_CALL_TIMEOUT: Final = 65.0


async def async_connect(
    catalog: GatewayCatalog, backend: ExposedBackend
) -> tuple[BackendRuntime, BackendCatalog, float]:
    """The backend's runtime and catalog, and the deadline the whole call keeps."""
    runtime = backend.runtime
    bound = BACKEND_CALL_TIMEOUT
    if runtime is not None:
        bound = min(bound, runtime.client.timeout)
    deadline = asyncio.get_running_loop().time() + bound
    # Most calls find the catalog cached: no timer for them.
    backend_catalog = None if runtime is None else catalog.fresh_catalog(backend, runtime)
    try:
        if backend_catalog is None:
            async with asyncio.timeout_at(deadline):
                backend_catalog = await catalog.async_backend_catalog(backend)
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


async def async_execute(
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
            return passthrough(tool.content, tool.structured, True)
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
    return passthrough(result.content, result.structured, result.is_error)


def _outcome_unknown(title: str, name: str, what: str) -> CallToolResult:
    """The result of a write sent to the backend whose answer never came."""
    return error_result(
        f"{name} was sent to {title}, which then {what}: it may have run. Read the state "
        "before trying again.",
        code="outcome_unknown",
        may_have_run=True,
    )
