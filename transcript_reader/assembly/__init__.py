"""Assembly: decode records -> timeline items (see ``assembly.assembler`` for the rules)."""

from transcript_reader.assembly.assembler import Assembler
from transcript_reader.assembly.rules import EXCERPT_CHARS, excerpt

__all__ = ["Assembler", "EXCERPT_CHARS", "excerpt"]
