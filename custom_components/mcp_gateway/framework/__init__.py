"""The shared entity framework every backend builds on.

The runtime contract (`base`), the coordinator, entity descriptions and specs, the publisher
that turns specs into HA entities, the entity limit, the config-flow mixin, and the record
of which kinds the registry holds (`kinds`). It knows no backend by name.
"""
