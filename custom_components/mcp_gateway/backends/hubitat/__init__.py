"""The hubitat backend."""
