"""`WebSearch` and `WebFetch` are native-only unless `local=` is given, as in pydantic-ai 2.x."""

from __future__ import annotations

from edgewise.agent.capabilities import WebFetch, WebSearch
from edgewise.agent.native_tools import WebFetchTool, WebSearchTool


def test_without_local_only_the_native_tool_is_offered() -> None:
    search: WebSearch[None] = WebSearch()
    fetch: WebFetch[None] = WebFetch()
    assert (search.local, search.get_toolset()) == (None, None)
    assert (fetch.local, fetch.get_toolset()) == (None, None)
    assert isinstance(search.get_native_tools()[0], WebSearchTool)
    assert isinstance(fetch.get_native_tools()[0], WebFetchTool)


def test_a_local_function_is_the_fallback() -> None:
    def search(query: str) -> str:
        return query  # pragma: no cover - listed, not called

    assert WebSearch(local=search).get_toolset() is not None
