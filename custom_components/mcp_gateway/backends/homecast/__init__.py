"""The homecast backend."""
