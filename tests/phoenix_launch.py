"""Start Arize Phoenix (an OTLP receiver from PyPI) with every listening socket on the loopback.

Phoenix's HTTP server takes ``PHOENIX_HOST``; its OTLP/gRPC server always binds ``[::]``. This launcher
wraps ``grpc.aio.server`` so that the gRPC port is bound on 127.0.0.1 too, then runs ``phoenix serve``.
Run with the Python of the environment Phoenix is installed in (``tests/test_export_phoenix.py``)."""

from __future__ import annotations

import sys

import grpc.aio

_server = grpc.aio.server


def _loopback_server(*args: object, **kwargs: object) -> object:
    server = _server(*args, **kwargs)  # type: ignore[arg-type]
    add = server.add_insecure_port
    server.add_insecure_port = lambda address: add(address.replace("[::]", "127.0.0.1"))  # type: ignore[method-assign]
    return server


grpc.aio.server = _loopback_server  # type: ignore[assignment]

from phoenix.server.main import main  # noqa: E402

sys.argv = ["phoenix", "serve"]
sys.exit(main())
