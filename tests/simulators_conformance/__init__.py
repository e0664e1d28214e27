"""Conformance of the simulators to their upstreams: tests of tests/simulators, not of the code.

Kept apart so the integration's coverage can be measured without them:
`pytest --cov --ignore=tests/simulators_conformance`.
"""
