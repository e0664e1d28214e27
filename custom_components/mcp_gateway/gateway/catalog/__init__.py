"""The tools the gateway offers: catalogs, the gateway tool, search, schemas."""
