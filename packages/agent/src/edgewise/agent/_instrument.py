"""Spans through logfire-api (agent run, model request, tool call), skipped when logfire is not installed."""

from __future__ import annotations as _annotations

from edgewise.graph._instrument import TRACING, Tracer

__all__ = ('TRACING', 'span')

span = Tracer('edgewise-agent').span
