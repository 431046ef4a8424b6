"""Providers: one package per agent whose transcripts are read (the only code that reads raw keys)."""
