"""Tests of the gateway's protocol, transports, auth and limits."""
