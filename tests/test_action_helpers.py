"""The action helpers the backends share: which entry an action may act through."""

from __future__ import annotations

from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import HomeAssistant, ServiceCall
from homeassistant.exceptions import ServiceValidationError
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from custom_components.mcp_gateway.core.const import CONF_BACKEND, DOMAIN
from custom_components.mcp_gateway.permissions.actions import ATTR_CONFIG_ENTRY_ID, entry_runtime
from custom_components.mcp_gateway.registry import BACKENDS

# Any two backends: the helpers treat every kind alike.
KIND, OTHER_KIND = (backend.kind for backend in BACKENDS[:2])


def _entry(
    hass: HomeAssistant, backend: str, state: ConfigEntryState, domain: str = DOMAIN
) -> MockConfigEntry:
    entry = MockConfigEntry(
        domain=domain, data={CONF_BACKEND: backend}, title="Bedroom clock", state=state
    )
    entry.add_to_hass(hass)
    return entry


def _call(hass: HomeAssistant, entry_id: str) -> ServiceCall:
    return ServiceCall(hass, DOMAIN, "any_action", {ATTR_CONFIG_ENTRY_ID: entry_id})


async def test_loaded_entry_gives_its_runtime(hass: HomeAssistant) -> None:
    """A loaded entry gives its runtime."""
    entry = _entry(hass, KIND, ConfigEntryState.LOADED)
    runtime = object()
    entry.runtime_data = runtime
    found = entry_runtime(_call(hass, entry.entry_id), KIND, not_found="gone")
    assert found is runtime


@pytest.mark.parametrize(
    ("backend", "domain"),
    [(OTHER_KIND, DOMAIN), (KIND, "other_integration")],
)
async def test_entry_of_another_backend_or_integration(
    hass: HomeAssistant, backend: str, domain: str
) -> None:
    """An entry that is not this backend's is `not_found`, even when loaded."""
    entry = _entry(hass, backend, ConfigEntryState.LOADED, domain)
    with pytest.raises(ServiceValidationError) as err:
        entry_runtime(_call(hass, entry.entry_id), KIND, not_found="gone", not_loaded="off")
    assert err.value.translation_key == "gone"
    assert err.value.translation_placeholders == {"entry_id": entry.entry_id}


async def test_unknown_entry(hass: HomeAssistant) -> None:
    """An unknown entry is a translated validation error naming it."""
    with pytest.raises(ServiceValidationError) as err:
        entry_runtime(_call(hass, "nope"), KIND, not_found="gone")
    assert err.value.translation_key == "gone"
    assert err.value.translation_placeholders == {"entry_id": "nope"}


async def test_entry_not_loaded(hass: HomeAssistant) -> None:
    """Its own message where the backend has one, else the not-found one."""
    entry = _entry(hass, KIND, ConfigEntryState.SETUP_RETRY)
    call = _call(hass, entry.entry_id)
    with pytest.raises(ServiceValidationError) as err:
        entry_runtime(call, KIND, not_found="gone", not_loaded="off")
    assert err.value.translation_key == "off"
    assert err.value.translation_placeholders == {"title": "Bedroom clock"}
    with pytest.raises(ServiceValidationError) as err:
        entry_runtime(call, KIND, not_found="gone")
    assert err.value.translation_key == "gone"
    assert err.value.translation_placeholders == {"entry_id": entry.entry_id}
