"""Usage and cost: the one owner of token accounting (:mod:`.accounting`, the rule in its docstring),
prices from a maintained source (:mod:`.pricing`), and the usage report over many sessions
(:mod:`.report`). Nothing is imported here: the assembly layer imports :mod:`.accounting` alone, and the
report stands above the library's read functions."""
