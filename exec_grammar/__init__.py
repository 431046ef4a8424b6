"""exec_grammar: static analysis of Codex code-mode ``exec`` scripts. (Stub: issue #2 fills this in.)"""

from exec_grammar.model import Analysis

__all__ = ["Analysis", "analyze"]


def analyze(script: str, parser: str = "tree-sitter") -> Analysis:
    raise NotImplementedError
