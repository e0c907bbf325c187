"""Durable execution of agent runs (each integration in its own module, behind its extra)."""
