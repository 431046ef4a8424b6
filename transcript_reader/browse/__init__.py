"""``transcript-reader browse``: an interactive session browser in the terminal (Textual).

A presentation layer like the CLI: it reads through the library's public API (``sources.py``) and
renders with the terminal renderer's pieces (``present.terminal``, ``present.listing``). Importing
this package does not import Textual; ``run`` does.
"""

from __future__ import annotations

from transcript_reader.browse.sources import BrowseConfig


def run(cfg: BrowseConfig) -> None:
    """Run the browser until the user quits."""
    from transcript_reader.browse.sources import prefetch

    prefetch(cfg)  # list the sessions while Textual is imported
    from transcript_reader.browse.app import BrowseApp

    BrowseApp(cfg).run()


__all__ = ["BrowseConfig", "run"]
