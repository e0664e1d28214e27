"""The demo: three simulated backends and a real Home Assistant with the integration set up.

`scripts/demo` runs it; `demo.ha` (a real `hass` process, onboarding, tokens, config flows over
REST) is reused by the peer checks and by the screenshot script.
"""
