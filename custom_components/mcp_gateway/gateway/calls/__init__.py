"""A gateway tool's call to a backend: its entry, its listing, its checks, its run, its record."""
