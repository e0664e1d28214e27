"""One permission model on every path: tiers, users, exposure, rate limits, actions."""
