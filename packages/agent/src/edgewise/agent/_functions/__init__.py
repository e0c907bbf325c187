"""The functions a user hands to an agent, read and called: tool and output functions, tool selectors.

- `schema`: a function's signature and docstring as a JSON schema; its arguments validated and applied.
- `docstrings`: descriptions read from google, numpy or sphinx docstrings.
- `tool_selector`: which tools a capability applies to (a list of names, a predicate on `RunContext`, or all).
- `keyword_options`: keyword options written once as a `TypedDict` (`**options: Unpack[...]`), with their
  defaults and the signature `inspect.signature` shows.

Above `models`, where `RunContext` is defined next to `Model` (the two name each other).
"""
