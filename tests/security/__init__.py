"""The security suite: every path, every kind of caller, every attack known to work before."""
