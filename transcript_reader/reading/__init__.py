"""Reading transcript bytes: files opened safely, plain or zstd lines, one JSON document read incrementally,
a file followed while it grows, a thread read across its files. No decoding of records happens here."""
