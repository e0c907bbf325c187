"""Fixtures of the capability tests: the scripted HTTP server on 127.0.0.1 of the provider model tests."""

from ..models.conftest import local_server as local_server
