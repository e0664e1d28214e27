"""Config flow: a menu of backends; each backend's steps live in backends/<name>/config_flow.py."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
import logging
import types
from typing import Any

from homeassistant.config_entries import ConfigFlow, ConfigFlowResult, OptionsFlow
from homeassistant.core import HomeAssistant, callback
from homeassistant.helpers import config_entry_oauth2_flow
import voluptuous as vol

from .core.const import CONF_BACKEND, CONF_GATEWAY_EXPOSED, DOMAIN
from .core.settings import (
    GATEWAY_TITLE,
    GATEWAY_UNIQUE_ID,
    KIND_GATEWAY,
    options_from_input,
    settings_schema,
)
from .framework.base import McpGatewayConfigEntry
from .gateway.approval.phones import async_pickable_phones, request_by_machine
from .registry import BACKENDS, backend

type _Step = Callable[[dict[str, Any] | None], Awaitable[ConfigFlowResult]]


class _FlowBase(config_entry_oauth2_flow.AbstractOAuth2FlowHandler):
    """What the flow class does itself: the menu, the gateway's entry, reauth/reconfigure
    dispatch; McpGatewayConfigFlow adds every backend's steps. The OAuth2 base serves
    Homecast's OAuth login (its mixin overrides hooks of it, so the mixins are real bases)."""

    VERSION = 1
    # 1.2: poll intervals under CONF_SCAN_INTERVAL (__init__.async_migrate_entry).
    MINOR_VERSION = 2
    DOMAIN = DOMAIN

    @property
    def logger(self) -> logging.Logger:
        """Logger the OAuth2 base class uses."""
        return logging.getLogger(__name__)

    async def async_step_user(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        """Ask which kind of backend to add (or the gateway's own settings entry)."""
        return self.async_show_menu(
            step_id="user",
            menu_options=[
                *(step for row in BACKENDS for step in (row.kind, *row.menu_steps)),
                KIND_GATEWAY,
            ],
        )

    async def async_step_gateway(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """The singleton entry that holds the gateway-wide settings."""
        await self.async_set_unique_id(GATEWAY_UNIQUE_ID)
        self._abort_if_unique_id_configured(error="gateway_already_configured")
        return _settings_step(
            self,
            "gateway",
            user_input,
            self.add_suggested_values_to_schema(
                settings_schema({}, *await _choices(self.hass)), user_input
            ),
            lambda options: self.async_create_entry(
                title=GATEWAY_TITLE, data={CONF_BACKEND: KIND_GATEWAY}, options=options
            ),
        )

    async def async_step_gateway_reconfigure(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Reconfiguring the gateway entry edits the same settings as its options."""
        entry = self._get_reconfigure_entry()
        return _settings_step(
            self,
            "gateway_reconfigure",
            user_input,
            settings_schema(entry.options, *await _choices(self.hass)),
            lambda options: self.async_update_reload_and_abort(entry, options=options),
        )

    async def async_step_reauth(self, entry_data: Mapping[str, Any]) -> ConfigFlowResult:
        """Dispatch a reauth to the backend's own step."""
        return await self._backend_step(entry_data[CONF_BACKEND], "reauth")

    async def async_step_reconfigure(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """Dispatch a reconfigure to the backend's own step."""
        return await self._backend_step(
            self._get_reconfigure_entry().data[CONF_BACKEND], "reconfigure"
        )

    async def _backend_step(self, kind: str, step: str) -> ConfigFlowResult:
        """Run `async_step_<kind>_<step>` of the backend's mixin, as its first step."""
        method: Callable[[], Awaitable[ConfigFlowResult]] = getattr(
            self, f"async_step_{kind}_{step}"
        )
        return await method()

    @staticmethod
    @callback
    def async_get_options_flow(config_entry: McpGatewayConfigEntry) -> OptionsFlow:
        """Options: the backend's own, plus whether the gateway exposes it."""
        return McpGatewayOptionsFlow()


def _flow_class(mixins: Iterable[type[ConfigFlow]]) -> type[_FlowBase]:
    """_FlowBase with each registry row's flow mixin as a further base.

    HA runs a step by `getattr(flow, f"async_step_{step_id}")`, and the Homecast mixin overrides
    the OAuth2 base's hooks, so the mixins must be bases, not looked up one by one. A class
    statement needs its bases spelled out; building the class here from the rows keeps the
    registry the one place that names a mixin. mypy sees _FlowBase (each mixin is
    type-checked in its own module); `domain` registers the class as the domain's handler.
    """
    flow = types.new_class(
        "McpGatewayConfigFlow",
        (_FlowBase, *mixins),
        {"domain": DOMAIN},
        lambda namespace: namespace.update(
            __module__=__name__,
            __qualname__="McpGatewayConfigFlow",
            __doc__="One flow class for every backend: the gateway's steps, then each row's.",
        ),
    )
    assert issubclass(flow, _FlowBase)
    return flow


McpGatewayConfigFlow = _flow_class(row.flow_mixin for row in BACKENDS)


class McpGatewayOptionsFlow(OptionsFlow):
    """One options form: the backend's fields first, then whether the gateway exposes it."""

    async def async_step_init(self, user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
        """Show the entry's own form: each kind has its step, so its help speaks of it alone."""
        kind = self.config_entry.data[CONF_BACKEND]
        if kind == KIND_GATEWAY:
            return await self.async_step_gateway()
        return await self._backend_options(kind, user_input)

    def __getattr__(self, name: str) -> _Step:
        """`async_step_<kind>` of every registry row: HA submits a form to the step it is
        named after, and each kind's form is its own step (its texts: options.step.<kind>).

        Looked up rather than written per kind, so a new row needs nothing here. (mypy then
        types any unknown attribute of this class as such a step; nothing else relies on it.)
        """
        kind = name.removeprefix("async_step_")
        if kind == name or kind not in {row.kind for row in BACKENDS}:
            raise AttributeError(name)

        async def step(user_input: dict[str, Any] | None = None) -> ConfigFlowResult:
            return await self._backend_options(kind, user_input)

        return step

    async def _backend_options(
        self, kind: str, user_input: dict[str, Any] | None
    ) -> ConfigFlowResult:
        """Show and store a backend's options: its own fields, then the gateway's exposure."""
        if user_input is not None:
            return self.async_create_entry(data=user_input)
        options = self.config_entry.options
        fields = backend(kind).options_schema(self.config_entry)
        fields[
            vol.Optional(CONF_GATEWAY_EXPOSED, default=options.get(CONF_GATEWAY_EXPOSED, True))
        ] = bool
        return self.async_show_form(step_id=kind, data_schema=vol.Schema(fields))

    async def async_step_gateway(
        self, user_input: dict[str, Any] | None = None
    ) -> ConfigFlowResult:
        """The gateway-wide settings: extra origins, rate limit, non-admin access."""
        return _settings_step(
            self,
            "gateway",
            user_input,
            settings_schema(self.config_entry.options, *await _choices(self.hass)),
            lambda options: self.async_create_entry(data=options),
        )


async def _choices(
    hass: HomeAssistant,
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The people and the phones the approval settings offer."""
    return await _people(hass), await async_pickable_phones(hass)


async def _people(hass: HomeAssistant) -> list[tuple[str, str]]:
    """The people of this Home Assistant (id, name), for the approval settings."""
    users = await hass.auth.async_get_users()
    return sorted(
        (
            (user.id, user.name or user.id)
            for user in users
            if user.is_active and not user.system_generated
        ),
        key=lambda item: item[1].casefold(),
    )


def _settings_step(
    flow: ConfigFlow | OptionsFlow,
    step_id: str,
    user_input: dict[str, Any] | None,
    schema: vol.Schema,
    store: Callable[[dict[str, Any]], ConfigFlowResult],
) -> ConfigFlowResult:
    """The gateway settings form (entry, reconfigure and options alike); `store` keeps them."""
    errors: dict[str, str] = {}
    if user_input is not None and request_by_machine(flow.hass):
        # Whoever holds the AI app's token must not turn approval off, pick its own "phone"
        # or allow approving in the app: these settings change from a person's own sign-in.
        errors = {"base": "signed_in_person_needed"}
    elif user_input is not None:
        options, errors = options_from_input(user_input)
        if not errors:
            return store(options)
    return flow.async_show_form(step_id=step_id, data_schema=schema, errors=errors)
