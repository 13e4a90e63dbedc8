"""One batching inference server per device that many worker-process actors feed
(``selfplay.inference_server=true``; the OpenSpiel C++ / KataGo pattern).

Without it every actor holds its own network and evaluator (``selfplay.actor_device=cuda``: one
CUDA context and one small batch per actor). With it, ONE server process owns the network on
``selfplay.actor_device`` (cpu | cuda | auto) and the actors' searches send it their leaves:

- each actor's ``InferenceClient`` (the search's ``evaluate`` callable) sends its planes over a
  Unix socket and waits for the reply (one message each way: planes out; logits and values,
  ``[n, A + 1]`` float32, back). Masks never travel: the client masks the logits itself.
- the server waits on every client (``multiprocessing.connection.wait``), concatenates every
  request that is ready into one batch (at most ``max_batch`` positions; more are split between
  batches, a request is never split), runs the usual evaluator (``make_evaluator``: onnxruntime on
  the CPU, torch bf16 on CUDA) once and sends each client its slice.
- the learner's side (``InferenceServer``) starts it, and ``load`` hands it a weight version and
  waits until it has loaded: ``ProcessBackend.publish`` calls it before any job of that version
  is submitted, so in ``train.mode=sync`` every position of a version-``v`` job is evaluated with
  ``v``'s weights, and a seeded run reproduces exactly where a position's outputs do not depend
  on the batch it shares: onnxruntime on the CPU (measured bitwise); torch (CPU, CUDA bf16) may
  move the last bits with the batch size. (In ``async`` a job in flight when a new version
  lands finishes its games on the new weights: its positions are a little fresher than
  ``Result.job.version`` says.)

Clients connect to the server's socket by address, so a replacement for a killed worker simply
connects again; the server drops a client whose connection breaks. A server that dies makes the
learner's side raise ``RuntimeError`` (the backend watches its sentinel) and its clients raise
``RuntimeError`` instead of waiting forever.

Plain pipes against shared memory, measured on the 2-core VM under load (2026-12-01): a round trip
of 128 UTTT positions (8x9x9 float32 planes, 332 kB out; 42 kB of logits and values back) took
155-560 us over the socket and 66-190 us through shared memory plus a one-byte signal, against
23 ms for the ``uttt_cpu`` network's forward pass of those positions on one core: 1-2% of a
batch, so the simpler pipes stay. (With a GPU's few-millisecond batches and many clients,
shared memory may be worth its bookkeeping: per-client segments, remade for a replaced worker.)
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import tempfile
import traceback
from multiprocessing.connection import Client, Connection, wait
from typing import Any

import numpy as np
import torch

from ultimate_rl.games import make as make_game
from ultimate_rl.nn import build_model, make_evaluator
from ultimate_rl.nn.config import ModelConfig
from ultimate_rl.nn.models import MASKED_LOGIT
from ultimate_rl.runtime.workers import actor_start_environment, ignore_stop_signals

MAX_BATCH = 4096  # positions in one forward pass at most


class InferenceClient:
    """An actor's ``evaluate`` callable that asks the server at ``address`` (the search's
    ``Evaluator`` contract: planes ``[N, C, H, W]`` float32 and masks ``[N, A]`` bool in; logits
    ``[N, A]`` float32 with ``MASKED_LOGIT`` at illegal actions and values ``[N]`` out)."""

    def __init__(self, address: str, observation_shape: tuple[int, ...], num_actions: int) -> None:
        self.conn = Client(address, family="AF_UNIX")
        self.observation_shape = tuple(observation_shape)
        self.num_actions = num_actions

    def __call__(self, planes: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        planes = np.ascontiguousarray(planes, dtype=np.float32)
        masks = np.asarray(masks, dtype=bool)
        n, a = planes.shape[0], self.num_actions
        if planes.shape[1:] != self.observation_shape or masks.shape != (n, a):
            raise ValueError(
                f"evaluate expects planes [N, *{list(self.observation_shape)}] and masks [N, {a}]"
                f", got {list(planes.shape)} and {list(masks.shape)}"
            )
        if n == 0:
            return np.zeros((0, a), np.float32), np.zeros(0, np.float32)
        try:
            self.conn.send_bytes(planes)
            reply = self.conn.recv_bytes()
        except (EOFError, OSError) as err:
            raise RuntimeError(f"the inference server has gone ({err!r})") from None
        out = np.frombuffer(reply, np.float32).reshape(n, a + 1)
        logits = out[:, :a].copy()
        np.putmask(logits, ~masks, MASKED_LOGIT)
        return logits, out[:, a].copy()

    def close(self) -> None:
        self.conn.close()


class _Server:
    """The server process's loop: control messages first, then new clients, then one batch."""

    def __init__(self, spec: Any, listener: socket.socket, control: Connection) -> None:
        torch.set_num_threads(1)
        game = make_game(spec.game_spec["name"], **spec.game_spec["options"])
        self.model = build_model(game, ModelConfig.from_dict(spec.model_config))
        self.evaluate = make_evaluator(
            self.model,
            spec.device,
            backend=spec.settings.inference,
            game=game,
            batch_size=spec.settings.evaluation_batch(spec.search),
        )
        self.shape = tuple(game.encode(game.initial_state()).shape)
        self.num_actions = game.num_actions
        self.listener, self.control = listener, control
        self.clients: list[Connection] = []
        self.max_batch = MAX_BATCH

    def serve(self) -> None:
        """Until the learner sends ``None`` (or goes away)."""
        while True:
            ready = set(wait([self.control, self.listener, *self.clients]))
            if self.control in ready and not self._control():
                return
            if self.listener in ready:
                self._accept()
            requests = []
            for conn in [c for c in self.clients if c in ready]:
                try:
                    planes = np.frombuffer(conn.recv_bytes(), np.float32)
                    requests.append((conn, planes.reshape(-1, *self.shape)))
                except (EOFError, OSError):
                    self._drop(conn)
            for batch in _batches(requests, self.max_batch):
                self._answer(batch)

    def _accept(self) -> None:
        """Every client waiting to connect (the listener does not block)."""
        while True:
            try:
                client, _ = self.listener.accept()
            except BlockingIOError:
                return
            client.setblocking(True)
            self.clients.append(Connection(client.detach()))

    def _control(self) -> bool:
        """Loads a weight version (and says so); ``False`` when told to stop."""
        message = self.control.recv()
        if message is None:
            return False
        weights, version = message
        self.model.load_state_dict({k: torch.tensor(v) for k, v in weights.items()})
        self.control.send(("loaded", version))
        return True

    def _answer(self, requests: list[tuple[Connection, np.ndarray]]) -> None:
        """One forward pass for ``requests``; each client gets its rows."""
        planes = np.concatenate([p for _, p in requests])  # writable, as torch.from_numpy wants
        masks = np.ones((len(planes), self.num_actions), bool)  # clients mask their own rows
        logits, values = self.evaluate(planes, masks)
        out = np.concatenate([logits, values[:, None]], axis=1).astype(np.float32, copy=False)
        start = 0
        for conn, p in requests:
            try:
                conn.send_bytes(out[start : start + len(p)])
            except OSError:  # the client died while waiting: a replacement connects anew
                self._drop(conn)
            start += len(p)

    def _drop(self, conn: Connection) -> None:
        self.clients.remove(conn)
        conn.close()


def _batches(
    requests: list[tuple[Connection, np.ndarray]], max_batch: int
) -> list[list[tuple[Connection, np.ndarray]]]:
    """``requests`` in order, grouped into batches of at most ``max_batch`` positions (a larger
    request is a batch of its own: the evaluator splits it)."""
    batches: list[list[tuple[Connection, np.ndarray]]] = []
    size = max_batch
    for request in requests:
        if size + len(request[1]) > max_batch:
            batches.append([])
            size = 0
        batches[-1].append(request)
        size += len(request[1])
    return batches


def _server_main(spec: Any, address: str, control: Connection) -> None:
    """The server process: builds the network, listens at ``address``, serves until told."""
    ignore_stop_signals()
    try:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(address)
        listener.listen(256)
        listener.setblocking(False)
        server = _Server(spec, listener, control)
        control.send(("ready", os.getpid()))
        server.serve()
    except EOFError:  # the learner has gone
        return
    except BaseException:
        with contextlib.suppress(OSError):
            control.send(("error", traceback.format_exc()))


class InferenceServer:
    """The learner's handle on a server process for ``spec`` (an ``ActorSpec``): starts it,
    ``load``s weight versions into it, notices its death, stops it (module doc)."""

    def __init__(self, spec: Any, context: Any) -> None:
        self.folder = tempfile.mkdtemp(prefix="ultimate_rl_inference_")
        self.address = os.path.join(self.folder, "socket")
        self.control, child = context.Pipe()
        self.process = context.Process(
            target=_server_main, args=(spec, self.address, child), daemon=True
        )
        with actor_start_environment():
            self.process.start()
        child.close()
        self._reply("ready")

    @property
    def sentinel(self) -> int:
        return self.process.sentinel

    def alive(self) -> bool:
        return self.process.is_alive()

    def load(self, weights: dict[str, np.ndarray], version: int) -> None:
        """Hands the server ``version``'s weights and waits until it has loaded them."""
        try:
            self.control.send((weights, version))
        except OSError:
            raise RuntimeError(self.death_message()) from None
        loaded = self._reply("loaded")
        if loaded != version:
            raise RuntimeError(f"inference server loaded version {loaded}, not {version}")

    def _reply(self, kind: str) -> Any:
        """The server's next message, which must be ``kind``; a clear error if it died."""
        while True:
            ready = wait([self.control, self.process.sentinel], timeout=5.0)
            if self.control in ready:
                try:
                    tag, value = self.control.recv()
                except (EOFError, OSError):
                    raise RuntimeError(self.death_message()) from None
                if tag == "error":
                    self.close()
                    raise RuntimeError(f"the inference server failed:\n{value}")
                assert tag == kind, (tag, kind)
                return value
            if self.process.sentinel in ready:
                raise RuntimeError(self.death_message())

    def death_message(self) -> str:
        """Why the server is gone: its exit code, and its traceback if it sent one."""
        self.process.join(timeout=1)
        cause = ""
        with contextlib.suppress(EOFError, OSError, ValueError):
            while self.control.poll():
                tag, value = self.control.recv()
                cause = f":\n{value}" if tag == "error" else cause
        return (
            f"the self-play inference server (pid {self.process.pid}) died (exit code "
            f"{self.process.exitcode}); its actors cannot evaluate: stopping self-play "
            f"(selfplay.inference_server=false gives each actor its own evaluator){cause}"
        )

    def close(self) -> None:
        """Asks the server to stop, kills it if it does not, removes its socket."""
        with contextlib.suppress(OSError):
            self.control.send(None)
        self.process.join(timeout=5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(timeout=5)
        self.control.close()
        shutil.rmtree(self.folder, ignore_errors=True)
