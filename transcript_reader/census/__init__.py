"""The census: figures over many transcripts (formats, versions, line accounting, items, exec scripts,
tools, tests, tokens), one file at a time in worker processes or on a Dask cluster.

``file`` holds the census of one file and one batch, ``pool`` the coordinators, ``figures`` the
mergeable counts, ``walk`` the file discovery and batching, ``rows`` the per-script rows. It only calls
the public library (``transcript_reader.api``, ``exec_grammar``) and never prints: the CLI
(``cli/census_cmd.py``) and the report (``present/census_report.py``) show what it returns.
"""
