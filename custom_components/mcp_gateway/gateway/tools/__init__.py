"""The HA-level core tools: get_state, set_state, get_history, list_backends."""
