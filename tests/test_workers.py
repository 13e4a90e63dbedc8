"""``bounded_jobs``: every task once, never more than ``limit`` in flight, the rest cancelled on
a stop or when the caller leaves early; ``first_finished`` drives it on a real pool."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial

from ultimate_rl.runtime.workers import bounded_jobs, first_finished


class FakePool:
    """Jobs that finish oldest first, one per wait; it records what was in flight."""

    def __init__(self) -> None:
        self.in_flight: list[int] = []
        self.most = 0
        self.cancelled: list[int] = []

    def submit(self, task: int) -> int:
        self.in_flight.append(task)
        self.most = max(self.most, len(self.in_flight))
        return task  # the handle

    def wait(self, pending: list[int]) -> list[int]:
        assert sorted(pending) == sorted(self.in_flight)
        return [self.in_flight.pop(0)]

    def jobs(self, tasks: range, limit: int, **kwargs: object):
        return bounded_jobs(tasks, self.submit, self.wait, self.cancelled.append, limit, **kwargs)


def test_every_task_finishes_once_with_at_most_limit_in_flight():
    pool = FakePool()
    assert [task for task, _ in pool.jobs(range(10), limit=3)] == list(range(10))
    assert pool.most == 3 and not pool.cancelled


def test_a_stop_cancels_what_is_in_flight_and_submits_no_more():
    pool = FakePool()
    done: list[int] = []
    for task, _ in pool.jobs(range(10), limit=3, should_stop=lambda: len(done) == 2):
        done.append(task)
    assert done == [0, 1] and pool.cancelled == [2, 3]  # 4 was never submitted


def test_leaving_early_cancels_what_is_in_flight():
    pool = FakePool()
    jobs = pool.jobs(range(10), limit=4)
    assert next(jobs)[0] == 0
    jobs.close()
    assert pool.cancelled == [1, 2, 3]


def test_a_pool_of_futures_runs_every_task():
    with ThreadPoolExecutor(2) as pool:
        wait = partial(first_finished, timeout=5.0)
        jobs = bounded_jobs(range(8), partial(pool.submit, pow, 2), wait, Future.cancel, 3)
        results = {task: future.result() for task, future in jobs}
    assert results == {k: 2**k for k in range(8)}
