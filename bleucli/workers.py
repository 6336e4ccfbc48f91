"""Worker processes that stop with their parent: on Ctrl-C, on a closed stdout, on a crash.

Pools are started with :func:`prepare_worker` as (part of) their initializer. Workers ignore
SIGINT, so Ctrl-C reaches only the parent, which terminates the pool on its way out (workers
interrupted in the middle of a queue operation could otherwise deadlock ``terminate`` and
print tracebacks of their own). On Linux a worker is also sent SIGTERM when its parent
dies, so a parent killed outright (SIGKILL, SIGPIPE) leaves no orphan holding its pipes open.
"""

from __future__ import annotations

import signal

_PR_SET_PDEATHSIG = 1


def prepare_worker() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        import ctypes
        import ctypes.util

        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: Ctrl-C and closed pipes still work
        pass


def pool(jobs: int, initializer=None, initargs: tuple = (), method: str | None = None):
    """A ``multiprocessing`` pool whose workers run :func:`prepare_worker` first."""
    import multiprocessing

    context = multiprocessing.get_context(method)
    return context.Pool(jobs, _Initializer(initializer, initargs))


class _Initializer:
    """Picklable: ``prepare_worker`` then the caller's initializer."""

    def __init__(self, initializer, initargs: tuple) -> None:
        self.initializer = initializer
        self.initargs = initargs

    def __call__(self) -> None:
        prepare_worker()
        if self.initializer is not None:
            self.initializer(*self.initargs)
