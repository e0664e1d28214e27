"""What the backends' actions share: how they are declared, and the entry an action names.

A backend lists its actions as `BackendAction`s; the integration's services.py registers them
all once. Every action names the config entry it acts through (`config_entry_id`).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Final

from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import ServiceCall, ServiceResponse, SupportsResponse
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers.typing import VolSchemaType

from ..const import CONF_BACKEND, DOMAIN
from .base import BackendRuntime

ATTR_CONFIG_ENTRY_ID: Final = "config_entry_id"

type ActionHandler = Callable[[ServiceCall], Coroutine[Any, Any, ServiceResponse]]


@dataclass(frozen=True, slots=True)
class BackendAction:
    """One action in the integration's domain."""

    name: str
    schema: VolSchemaType
    handler: ActionHandler
    supports_response: SupportsResponse


def entry_runtime(
    call: ServiceCall, backend: str, *, not_found: str, not_loaded: str | None = None
) -> BackendRuntime:
    """The runtime of the loaded `backend` entry that the call names.

    Otherwise a ServiceValidationError: `not_found` (placeholder `entry_id`) for no such entry,
    and `not_loaded` (placeholder `title`) for one that is not loaded, or `not_found` again
    where the backend has no message of its own for that.
    """
    entry_id: str = call.data[ATTR_CONFIG_ENTRY_ID]
    entry = call.hass.config_entries.async_get_entry(entry_id)
    if entry is None or entry.domain != DOMAIN or entry.data.get(CONF_BACKEND) != backend:
        raise _not_found(not_found, entry_id)
    if entry.state is not ConfigEntryState.LOADED:
        if not_loaded is None:
            raise _not_found(not_found, entry_id)
        raise ServiceValidationError(
            translation_domain=DOMAIN,
            translation_key=not_loaded,
            translation_placeholders={"title": entry.title},
        )
    runtime: BackendRuntime = entry.runtime_data
    return runtime


def _not_found(key: str, entry_id: str) -> ServiceValidationError:
    return ServiceValidationError(
        translation_domain=DOMAIN,
        translation_key=key,
        translation_placeholders={"entry_id": entry_id},
    )
