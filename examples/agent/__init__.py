"""Agent examples, runnable offline: each one scripts its model with a `FunctionModel`."""
