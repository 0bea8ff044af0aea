"""Adapters for agent frameworks. Each lives in its own module and needs its optional extra:

* `memstrata.integrations.langchain` — `MemstrataChatMessageHistory` and `MemstrataRetriever`
  (`pip install 'memstrata-ai[langchain]'`);
* `memstrata.integrations.langgraph` — `MemstrataStore`, a LangGraph `BaseStore`
  (`pip install 'memstrata-ai[langgraph]'`).

Importing `memstrata` or this package imports no framework; only the adapter modules do, and they
raise an `ImportError` naming the extra when the framework is missing.
"""
