"""Scripted model turns for the recorder (data: one JSON file per scenario)."""
