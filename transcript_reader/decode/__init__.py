"""Decoders: the only code that reads raw transcript keys (house style: one owner per wire format)."""
