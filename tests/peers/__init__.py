"""Helpers that run a real Home Assistant for peer checks and the benchmark (not pytest tests)."""
