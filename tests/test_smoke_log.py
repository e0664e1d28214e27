# ruff: noqa: E501  (HA writes each log record on one line, however long)
"""The smoke check's reading of HA's log: what names the integration fails it, the rest not."""

from __future__ import annotations

from demo.smoke import complaints_about_us

LOG = """\
2026-11-05 10:00:00.100 WARNING (MainThread) [homeassistant.loader] We found a custom integration mcp_gateway which has not been tested by Home Assistant
2026-11-05 10:00:01.200 ERROR (MainThread) [haffmpeg.core] FFmpeg fails [Errno 2] No such file or directory: 'ffmpeg'
2026-11-05 10:00:02.300 ERROR (MainThread) [homeassistant.config_entries] Error setting up entry Home Hub for mcp_gateway
Traceback (most recent call last):
  File "/config/custom_components/mcp_gateway/__init__.py", line 1, in async_setup_entry
ValueError: boom
2026-11-05 10:00:03.400 WARNING (MainThread) [homeassistant.helpers.frame] Detected that custom integration 'mcp_gateway' uses a deprecated constant, please report it to the author
2026-11-05 10:00:04.500 ERROR (MainThread) [homeassistant.components.http] Error in a view
Traceback (most recent call last):
  File "/srv/custom_components/mcp_gateway/gateway/view.py", line 9, in post
KeyError: 'x'
2026-11-05 10:00:05.600 INFO (MainThread) [custom_components.mcp_gateway] error counters reset
"""


def test_errors_and_deprecations_naming_us_are_found_with_their_traceback() -> None:
    found = complaints_about_us(LOG)
    assert len(found) == 3
    assert found[0].startswith("2026-11-05 10:00:02.300 ERROR")
    assert found[0].endswith("ValueError: boom")
    assert "deprecated constant" in found[1]
    # An error whose header names another logger, with a traceback through our code.
    assert found[2].endswith("KeyError: 'x'")


def test_other_integrations_errors_and_our_plain_warnings_pass() -> None:
    quiet = "\n".join(LOG.splitlines()[:2]) + "\n"
    assert complaints_about_us(quiet) == []
    assert complaints_about_us("") == []
