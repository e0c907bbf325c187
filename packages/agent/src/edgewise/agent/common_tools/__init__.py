"""Ready-made tools: `image_generation` and `x_search`, which hand the work to a model that has the native tool for
it (the local fallbacks of `ImageGeneration(fallback_model=...)` and `XSearch(fallback_model=...)`).

pydantic-ai's other common tools (DuckDuckGo, Tavily, Exa, web fetch) need third-party packages and are not here.
"""
