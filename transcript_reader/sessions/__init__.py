"""Sessions across a home: finding them (``discovery``, ``session_homes``), listing rows (``entry``),
and the session store (``store``), the one place derived cross-session facts are kept on disk."""
