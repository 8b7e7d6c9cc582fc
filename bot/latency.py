"""The interpreter's thread switch interval, set for an event loop that shares the GIL with worker threads.

Search updates, snapshot writes and SQL row decoding run in worker threads so the loop stays free, but they hold
the GIL while they run Python code. A thread that wants the GIL back asks for it and waits up to the switch
interval (5 ms by default); the loop thread asks at every step that released it (each `select`, each callback
into C and back), so one turn of the loop could wait many intervals: at 100k chunks a one-line edit stalled the
loop 73-133 ms while the update ran. At 1 ms the same edit stalled it 13-30 ms, and the update itself took no
longer (docs/benchmarks.md, "Loop stalls during an update").
"""

from __future__ import annotations

import sys

SWITCH_INTERVAL_S = 0.001


def keep_loop_responsive() -> None:
    """Hand the GIL over every millisecond instead of every five (process-wide; idempotent)."""
    sys.setswitchinterval(SWITCH_INTERVAL_S)
