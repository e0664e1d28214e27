"""The robine_wake backend."""
