"""Running work on several threads at once: one runner for learning, playing, merging and shards.

The kernels release the GIL, so threads of this process run them truly in parallel. Each
thread's random state sits on cache lines of its own (:func:`td2048.rng.thread_rng_rows`);
:func:`run_threads` starts the threads, waits for them, and hands the first error back to the
caller.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


def run_threads(threads: int, worker: Callable[[int], None], *, barrier: threading.Barrier | None = None,
                on_error: Callable[[], None] | None = None, tick: Callable[[], float] | None = None) -> None:
    """Run ``worker(thread)`` for thread = 0 .. threads - 1 at once and wait for all of them.

    One thread runs on the caller's (no thread is started, and ``tick`` is never called).

    Parameters
    ----------
    threads : int
        Threads to run.
    worker : callable
        Called once on each thread with its number.
    barrier : threading.Barrier or None
        A barrier the workers wait at: a worker that fails breaks it, so that no other waits there
        forever (the others' ``BrokenBarrierError`` is not the error reported).
    on_error : callable or None
        Called on the failing thread when a worker fails, before the barrier is broken (e.g. to ask
        the other threads' kernels to return).
    tick : callable or None
        While waiting, called again after the seconds it returned.

    Raises
    ------
    BaseException
        The first error a worker raised.
    """
    if threads == 1:
        worker(0)
        return
    errors = []

    def guarded(thread):
        try:
            worker(thread)
        except BaseException as error:  # noqa: BLE001 - handed to the calling thread
            if barrier is not None and isinstance(error, threading.BrokenBarrierError):
                return  # another thread failed and broke the barrier: its error is the one to report
            errors.append(error)
            if on_error is not None:
                on_error()
            if barrier is not None:
                barrier.abort()

    workers = [threading.Thread(target=guarded, args=(t,), daemon=True) for t in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        while w.is_alive():
            w.join(max(0.001, tick()) if tick is not None else None)
    if errors:
        raise errors[0]


def solver_threads() -> int:
    """Threads for the solver's and the exact valuation's layers: Numba's thread count (the machine's cores,
    or ``$NUMBA_NUM_THREADS``)."""
    import numba

    return int(numba.config.NUMBA_NUM_THREADS)


def split_range(kernel: Callable[..., object], count: int, *args, threads: int | None = None,
                least: int = 4096) -> list:
    """Run ``kernel(first, last, *args)`` over equal consecutive parts of ``range(count)``, one per thread, at once.

    The kernels release the GIL: compiled serial loops over ranges, run on threads, do what a
    ``numba.prange`` loop does, and compile in a fraction of its time.

    Parameters
    ----------
    kernel : callable
        ``kernel(first, last, *args)`` does items first .. last - 1 and returns what the caller reduces.
    count : int
        The items.
    *args
        The kernel's other arguments.
    threads : int or None
        Parts (None: :func:`solver_threads`).
    least : int
        Fewer items than this a thread: fewer threads (one for a small range).

    Returns
    -------
    list
        Each part's result, in order.
    """
    threads = max(1, min(threads or solver_threads(), count // least))
    bounds = [count * t // threads for t in range(threads + 1)]
    results: list = [None] * threads

    def worker(t):
        results[t] = kernel(bounds[t], bounds[t + 1], *args)

    run_threads(threads, worker)
    return results
