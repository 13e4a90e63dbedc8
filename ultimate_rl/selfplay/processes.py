"""Self-play actors as worker processes on this machine (``selfplay.backend=processes``).

Each worker is a spawned process with its own pipe: the learner sends one ``Job`` (with the
weights when the worker's are older), the worker sends back its ``Result``. One job in flight
per worker bounds what waits in memory, and a worker is only sent to while it waits to receive,
so neither side can block the other. ``wait`` watches the pipes and the processes' sentinels
together: a worker that dies (SIGKILL, out of memory) is noticed at once, replaced, and its job
sent again to the replacement, which plays the same games (``actor.Job``).

With ``selfplay.inference_server=true`` the workers hold no network: one ``InferenceServer``
process evaluates for all of them (``selfplay.inference_server``). ``publish`` loads each weight
version into it before any job of that version is sent; ``wait`` watches its sentinel too, and a
dead server stops self-play with a ``RuntimeError``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import traceback
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any

import torch.multiprocessing as mp

from ultimate_rl.runtime.workers import actor_start_environment, ignore_stop_signals
from ultimate_rl.selfplay.actor import (
    ActorCore,
    ActorSpec,
    Job,
    Result,
    Weights,
)
from ultimate_rl.selfplay.inference_server import InferenceServer

log = logging.getLogger(__name__)


def _worker_main(spec: ActorSpec, conn: Connection) -> None:
    """A worker process: receives (job, weights), plays, sends the result; ``None`` stops it."""
    ignore_stop_signals()
    try:
        core = ActorCore(spec)
        while (message := conn.recv()) is not None:
            conn.send(core.run(*message))
    except EOFError:  # the learner has gone: nothing left to do
        return
    except BaseException:
        conn.send(traceback.format_exc())


@dataclass
class _Slot:
    process: Any
    conn: Connection
    version: int = -1  # the weights the worker holds
    job: Job | None = None  # the job in flight


class ProcessBackend:
    """``workers`` worker processes; see the module doc."""

    def __init__(self, spec: ActorSpec, workers: int) -> None:
        self.context = mp.get_context("spawn")
        self.server: InferenceServer | None = None
        if spec.settings.inference_server:
            self.server = InferenceServer(spec, self.context)
            spec = dataclasses.replace(spec, server_address=self.server.address)
        self.spec = spec
        self.weights: Weights | None = None
        self.version = -1
        self.replaced = 0
        self.slots = [self._spawn() for _ in range(workers)]

    @property
    def num_actors(self) -> int:
        return len(self.slots)

    def _spawn(self) -> _Slot:
        parent, child = self.context.Pipe()
        process = self.context.Process(target=_worker_main, args=(self.spec, child), daemon=True)
        with actor_start_environment():
            process.start()
        child.close()
        return _Slot(process, parent)

    def publish(self, weights: Weights, version: int) -> None:
        """The weights that jobs of ``version`` are played with."""
        if self.server is not None:
            self.server.load(weights, version)
        self.weights, self.version = weights, version

    def submit(self, actor: int, job: Job) -> None:
        """Sends ``job`` to worker ``actor`` (idle); a dead worker is replaced in ``wait``."""
        slot = self.slots[actor]
        slot.job = job
        stale = slot.version != job.version and self.server is None
        weights = self.weights if stale else None
        try:
            slot.conn.send((job, weights))
            slot.version = job.version
        except (BrokenPipeError, ConnectionResetError):
            pass  # its sentinel is ready: wait() replaces it and sends the job again

    def wait(self, timeout: float) -> list[tuple[int, Result]]:
        """The jobs finished within ``timeout`` seconds, as (actor, result)."""
        busy = {i: s for i, s in enumerate(self.slots) if s.job is not None}
        handles = [s.conn for s in busy.values()] + [s.process.sentinel for s in busy.values()]
        if self.server is not None:
            handles.append(self.server.sentinel)
        ready = set(wait(handles, timeout)) if handles else set()
        self._check_server(ready)
        done = []
        for i, slot in busy.items():
            message = None
            if slot.conn in ready:
                try:
                    message = slot.conn.recv()
                except (EOFError, ConnectionResetError):
                    message = None
            if isinstance(message, str):
                self._check_server({self.server.sentinel} if self.server else set(), 1.0)
                self.close()
                raise RuntimeError(f"self-play worker {i} failed:\n{message}")
            if isinstance(message, Result):
                slot.job = None
                done.append((i, message))
            elif slot.conn in ready or slot.process.sentinel in ready:
                self._replace(i)
        return done

    def _check_server(self, ready: set, grace: float = 0.0) -> None:
        """Raises (after stopping the workers) if the inference server has died."""
        if self.server is None or self.server.sentinel not in ready:
            return
        self.server.process.join(timeout=grace)
        if not self.server.alive():
            message = self.server.death_message()
            self.close()
            raise RuntimeError(message)

    def _replace(self, actor: int) -> None:
        """A new process in the dead worker's place, given the job the dead one had (with the
        latest weights: the same ones in a sync round, where only the seed matters)."""
        old = self.slots[actor]
        old.process.join(timeout=1)
        assert old.job is not None
        job = dataclasses.replace(old.job, version=self.version)
        log.warning(
            "self-play worker %d died (exit code %s); replaced, its %d games replayed (job %d)",
            actor,
            old.process.exitcode,
            job.num_games,
            job.index,
        )
        old.conn.close()
        self.slots[actor] = self._spawn()
        self.replaced += 1
        self.submit(actor, job)

    def pids(self) -> list[int]:
        """The worker processes' ids (what an operator, or a test, would kill)."""
        return [int(slot.process.pid) for slot in self.slots]

    def close(self) -> None:
        """Stops the workers: idle ones are asked to exit, busy ones (their job is not wanted
        any more) and any that do not exit are killed."""
        for slot in self.slots:
            if slot.job is not None:
                slot.process.kill()
                continue
            with contextlib.suppress(BrokenPipeError, ConnectionResetError, OSError):
                slot.conn.send(None)
        for slot in self.slots:
            slot.process.join(timeout=5)
            if slot.process.is_alive():
                slot.process.kill()
                slot.process.join(timeout=5)
            slot.conn.close()
        self.slots = []
        if self.server is not None:
            self.server.close()
            self.server = None
