"""Adapters to other agent frameworks' tools: `langchain` (LangChain tools as Edgewise tools)."""
