"""BackendCoordinator: what every backend's coordinator shares.

Each backend polls its own way (`_async_fetch`); this base times the poll and turns the MCP
client's failures into Home Assistant's, once and translated, as core's coordinators do: a
refused credential starts reauthentication, any other MCP failure marks the entities
unavailable until a poll succeeds again.
"""

from __future__ import annotations

from abc import abstractmethod
from datetime import timedelta
import logging
import time
from typing import TYPE_CHECKING

from homeassistant.core import HomeAssistant
from homeassistant.exceptions import ConfigEntryAuthFailed
from homeassistant.helpers.update_coordinator import DataUpdateCoordinator, UpdateFailed

from ..core.const import DOMAIN
from ..mcp.errors import McpAuthError, McpError

if TYPE_CHECKING:
    from .base import McpGatewayConfigEntry


class BackendCoordinator[DataT](DataUpdateCoordinator[DataT]):
    """A backend's poll, timed, with MCP errors mapped to HA's once."""

    config_entry: McpGatewayConfigEntry

    def __init__(
        self,
        hass: HomeAssistant,
        logger: logging.Logger,
        entry: McpGatewayConfigEntry,
        *,
        name: str,
        update_interval: timedelta,
        always_update: bool = True,
    ) -> None:
        super().__init__(
            hass,
            logger,
            config_entry=entry,
            name=name,
            update_interval=update_interval,
            always_update=always_update,
        )
        # How long the last successful poll took (list_backends and diagnostics show it).
        self.latency_ms: float | None = None

    def changed_devices(self) -> frozenset[str] | None:
        """Device keys whose entities the current notification concerns; None: every entity.

        Entities listen with their device key as context (`CoordinatorEntity`'s public
        listener context) and skip a state write that is not about their device.
        """
        return None

    @abstractmethod
    async def _async_fetch(self) -> DataT:
        """One poll of the backend; MCP errors propagate (they are mapped here)."""

    def _on_auth_failed(self, err: McpAuthError) -> None:
        """Hook before reauthentication starts (e.g. a repair issue naming the cause)."""

    async def _async_update_data(self) -> DataT:
        started = time.perf_counter()
        try:
            data = await self._async_fetch()
        except McpAuthError as err:
            self._on_auth_failed(err)
            raise ConfigEntryAuthFailed(
                translation_domain=DOMAIN, translation_key="auth_failed"
            ) from err
        except McpError as err:
            raise UpdateFailed(
                translation_domain=DOMAIN,
                translation_key="update_failed",
                translation_placeholders={"title": self.config_entry.title, "error": str(err)},
            ) from err
        self.latency_ms = (time.perf_counter() - started) * 1000
        return data
