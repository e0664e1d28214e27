"""Everyday requests on the demo's home, each within two tool calls, over the real wire."""
