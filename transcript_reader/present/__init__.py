"""Presentation of timelines and listings: terminal (rich), Markdown and self-contained HTML."""
