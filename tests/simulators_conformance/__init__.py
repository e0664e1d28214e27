"""Conformance of the simulators to their upstreams: tests of simulators/, not of the integration.

Kept apart so the integration's coverage can be measured without them:
`pytest --cov --ignore=tests/simulators_conformance`.
"""
