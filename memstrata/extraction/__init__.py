"""Extraction: turn chat messages into candidate memories (rules offline; an LLM when configured)."""

from .base import Candidate, EntityMention, Extractor, Message, ProfileSlot

__all__ = ["Candidate", "EntityMention", "Extractor", "Message", "ProfileSlot"]
