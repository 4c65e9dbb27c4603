"""Agent actions: parsing shell commands, extracting what they do, and comparing two of them."""

from builder.actions.bashparse import parses
from builder.actions.similarity import SIMILARITIES, Similarity, get_similarity

__all__ = ["SIMILARITIES", "Similarity", "get_similarity", "parses"]
