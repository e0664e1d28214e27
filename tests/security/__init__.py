"""The security suite: every path, every kind of caller, every attack the issue found."""
