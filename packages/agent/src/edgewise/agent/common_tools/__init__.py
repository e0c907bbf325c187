"""Ready-made tools, as in pydantic-ai's `common_tools`: `web_fetch` (a page as markdown, with SSRF checks),
`duckduckgo`, `tavily` and `exa` (web search over each service's HTTP API, no SDK needed), and `image_generation`
and `x_search`, which hand the work to a model that has the native tool for it (the local fallbacks of
`ImageGeneration(fallback_model=...)` and `XSearch(fallback_model=...)`).
"""
