"""Fixtures of the batching tests."""

from __future__ import annotations

import signal
import threading

import pytest


@pytest.fixture
def sigint_raises():
    """Ctrl-C raises KeyboardInterrupt during the test, also where the suite runs with SIGINT
    ignored (a background job of a non-interactive shell starts Python that way)."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signal handlers are set in the main thread only")
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)
