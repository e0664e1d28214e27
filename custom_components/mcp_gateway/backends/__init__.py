"""The backends: one package per kind, each registered by its row in registry.py."""
