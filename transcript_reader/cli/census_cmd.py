"""``transcript-reader census``: the census command lives in corpus_tools (it is a script over library
calls); this module only plugs it into the ``transcript-reader`` group."""

from corpus_tools.census_cli import census_command as census_cmd

__all__ = ["census_cmd"]
