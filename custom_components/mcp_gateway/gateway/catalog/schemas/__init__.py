"""Tool schemas: the portable subset, backend schemas converted into it, arguments checked."""
