"""Where the chat app of `Agent.to_web()` serves its built-in page: pydantic-ai 2.68's `DEFAULT_HTML_URL` and
`OFFLINE_HTML_URL`, in Edgewise's terms.

pydantic-ai's app downloads its chat page from a content delivery network: `DEFAULT_HTML_URL` is that page (which
loads more files from there) and `OFFLINE_HTML_URL` a single self-contained file for machines with no internet
access, both given as `html_source` to choose one. Edgewise ships its page in the wheel and fetches nothing from
elsewhere, so the two names are the paths where the app serves its own page: the page with its files under
`/assets/`, and the same page as one self-contained document. Given as `html_source`, either serves that variant
at `/` and at each chat's path (so code written for pydantic-ai that passes them keeps working, offline).
"""

from __future__ import annotations as _annotations

__all__ = ('DEFAULT_HTML_URL', 'OFFLINE_HTML_URL')

DEFAULT_HTML_URL = '/'
"""The path of the built-in chat page, whose script and styles the app serves under `/assets/` (the default)."""

OFFLINE_HTML_URL = '/offline.html'
"""The path of the built-in chat page as one document with its script and styles inlined: nothing but the page
itself and the app's API is fetched, so it can be saved or put behind a proxy that forwards one document."""
