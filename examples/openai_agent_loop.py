"""A plain-Python chat loop with memstrata memory and any OpenAI-compatible endpoint.

    # OpenAI, or Ollama / vLLM / LM Studio / llama.cpp server (any /v1/chat/completions):
    export OPENAI_BASE_URL=http://localhost:11434/v1 OPENAI_MODEL=llama3.2 OPENAI_API_KEY=...
    python examples/openai_agent_loop.py --user alice --session monday

The OPENAI_* variables are read by this example for its chat model only. memstrata itself never reads
them: its own LLM (extraction, consolidation) is MEMSTRATA_LLM=openai:MODEL with MEMSTRATA_LLM_BASE_URL
and MEMSTRATA_LLM_API_KEY.

Each turn, `AgentWithMemory` (memstrata.integrations.agent) puts what memstrata knows about the user into the
system prompt (profile, relevant memories from past sessions, pending items), adds the session's
rolling summary and recent turns, asks the model, and saves both turns. Typing `/end` (or EOF)
ends the session: the user context object (preferences, last topics, open items) is updated.
Run it again with another `--session` and the model sees what was said before.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable, Iterator

from memstrata import Memory, Scope
from memstrata.integrations.agent import AgentWithMemory
from memstrata.llm import OpenAICompatibleLLM


def run_session(memory: Memory, llm: OpenAICompatibleLLM, scope: Scope, inputs: Iterable[str]) -> Iterator[str]:
    """Chat through `inputs` (stopping at "/end"), yield each reply, then end the session."""
    agent = AgentWithMemory(memory, scope=scope, llm=llm)
    for text in inputs:
        if text.strip() == "/end":
            break
        if text.strip():
            yield agent.chat(text)
    agent.end_session(background=False)


def lines(prompt: str) -> Iterator[str]:
    while True:
        try:
            yield input(prompt)
        except EOFError:
            return


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--user", default="alice")
    parser.add_argument("--session", default="default")
    parser.add_argument("--store", default="sqlite:///memories.db")
    parser.add_argument("--base-url", default=os.environ.get("OPENAI_BASE_URL", "https://api.openai.com/v1"))
    parser.add_argument("--model", default=os.environ.get("OPENAI_MODEL", "gpt-4o-mini"))
    args = parser.parse_args(argv)
    llm = OpenAICompatibleLLM(args.base_url, args.model, api_key=os.environ.get("OPENAI_API_KEY"))
    with Memory(store=args.store) as memory:
        try:
            for reply in run_session(memory, llm, Scope(args.user, session_id=args.session), lines("you> ")):
                print(f"assistant> {reply}")
        finally:
            llm.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
