"""The parts of the command that a subprocess test cannot time: the signal handlers."""

from __future__ import annotations

import signal
from types import SimpleNamespace

import pytest

from coach.cli_run import _install_signal_handlers


@pytest.fixture
def restore_handlers():  # type: ignore[no-untyped-def]
    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    yield
    for s, handler in saved.items():
        signal.signal(s, handler)


@pytest.mark.usefixtures("restore_handlers")
def test_first_signal_asks_to_stop_second_stops_at_once() -> None:
    graph = SimpleNamespace(stop_requested=None)
    _install_signal_handlers(graph)
    handler = signal.getsignal(signal.SIGINT)
    assert callable(handler)
    handler(signal.SIGINT, None)
    assert graph.stop_requested == signal.SIGINT  # the run stops after its current step
    with pytest.raises(KeyboardInterrupt):
        handler(signal.SIGINT, None)


@pytest.mark.usefixtures("restore_handlers")
def test_second_sigterm_exits_143() -> None:
    graph = SimpleNamespace(stop_requested=None)
    _install_signal_handlers(graph)
    handler = signal.getsignal(signal.SIGTERM)
    assert callable(handler)
    handler(signal.SIGTERM, None)
    with pytest.raises(SystemExit) as stop:
        handler(signal.SIGTERM, None)
    assert stop.value.code == 143
