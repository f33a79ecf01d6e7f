"""The zygote: a clean process that forks every sandbox, so that a sandbox holds nothing of the grader's.

A sandbox forked from the judge starts with the judge's memory (the teacher's environment, the hidden checks, a
batch's jobs); scrub.py makes it forget what Python reaches, not what the garbage collector's lists or raw
memory still hold. The zygote never holds any of it. The process that makes judges (`grade`, a batch, the warm
service, a cluster worker) starts it once (`shared`): a fresh Python, exec'd with an environment built here (no
variable of the teacher's), that imports torch and the sandbox runtime only, never a check module nor
grader.judge.grading, batch, gradients or checking. Each judge gets a connection of its own (`connect`: one end of a
socketpair travels to the zygote by SCM_RIGHTS). On it the judge asks for a sandbox (`spawn`), handing over the
sandbox's end of their connection and its output file (SCM_RIGHTS again); the zygote forks a child that reads
its setup (the learner's source, the isolation plan, the limits, the probes' code: probecode.py) from that
connection, straight from the judge, then applies the isolation layers and serves the judge exactly as a forked
sandbox does. The zygote never reads a submission. It reports each child's exit status to its judge (`wait`),
and kills the sandboxes of a judge whose connection closes. Set TORCH_KATAS_ZYGOTE=0 to fork sandboxes from the
judge as before. The Linux backend's (backend.py): the portable backend has no zygote (`enabled` is False there).
"""

from __future__ import annotations

import gc
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
from collections.abc import Callable

from grader import framing

SWITCH = "TORCH_KATAS_ZYGOTE"
PASSED = ("CUDA_VISIBLE_DEVICES", "LD_LIBRARY_PATH")  # what torch needs of the caller's environment, nothing else
READY_TIMEOUT = 300.0  # seconds a judge waits for the zygote's first answer (it imports torch once)
BOOT = ("import json, sys; sys.path[:] = json.loads(sys.argv[1]); "
        "from grader.sandbox.zygote import serve; serve(int(sys.argv[2]))")


def enabled() -> bool:
    from grader.sandbox import backend

    return os.environ.get(SWITCH, "1") != "0" and not backend.portable()


def clean_environment() -> dict[str, str]:
    """The zygote's whole environment, built here: never a copy of the caller's."""
    env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "OMP_NUM_THREADS": "1", "PYTORCH_NVML_BASED_CUDA_CHECK": "1"}
    env.update({k: v for k, v in os.environ.items() if k in PASSED})
    return env


# -- the grading parent's side -------------------------------------------------------------------

class Zygote:
    """The started zygote, as the process that makes judges holds it."""

    def __init__(self):
        self.control, theirs = socket.socketpair()
        debug = os.environ.get("GRADER_DEBUG")
        self.process = subprocess.Popen(
            [sys.executable, "-I", "-c", BOOT, json.dumps(sys.path), str(theirs.fileno())],
            env=clean_environment(), cwd="/", pass_fds=[theirs.fileno()], stdin=subprocess.DEVNULL,
            stdout=None if debug else subprocess.DEVNULL, stderr=None if debug else subprocess.DEVNULL,
            start_new_session=True)  # a Ctrl-C meant for the batch does not reach it; it ends when we do
        theirs.close()

    def alive(self) -> bool:
        return self.process.poll() is None

    def connect(self) -> socket.socket:
        """A connection of one judge's own to the zygote."""
        ours, theirs = socket.socketpair()
        try:
            socket.send_fds(self.control, [b"j"], [theirs.fileno()])
        finally:
            theirs.close()
        return ours

    def close(self) -> None:
        self.control.close()
        try:
            self.process.wait(5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


_shared: Zygote | None = None


def shared() -> Zygote | None:
    """This process's zygote, started on first use (again if it died); None with TORCH_KATAS_ZYGOTE=0."""
    global _shared
    if not enabled():
        return None
    if _shared is None or not _shared.alive():
        _shared = Zygote()
    return _shared


def connect() -> socket.socket | None:
    """A new judge's connection to this process's zygote (None when sandboxes fork from the judge)."""
    zygote = shared()
    if zygote is None:
        return None
    try:
        return zygote.connect()
    except OSError:  # it died between the check and the send: a fresh one
        zygote.close()
        zygote = shared()
        return zygote.connect() if zygote else None


# -- the judge's side --------------------------------------------------------------------------------

class Lost(Exception):
    """The zygote did not answer: the grader's failure, never the learner's."""


class Channel:
    """A judge's connection to the zygote, and what its sandboxes need of the grading (preloads, probe modules)."""

    def __init__(self, sock: socket.socket, preload: tuple[str, ...] = (), probes: Callable[[], dict] = dict,
                 judge: bool = False):
        self.sock = sock
        self.judge = judge  # a judge's: a lost zygote ends it (a grader failure), never a check's verdict
        self.preload = preload
        self.probes = probes  # the code of the probes its sandboxes may run (probecode.bundle)
        self._lines, self._pending = framing.Lines(), list[dict]()
        self._exits: dict[int, int] = {}
        self.waiting: list = []  # the sandboxes asked for whose pids are not read yet, in the order asked (handle.py)
        self.out_of_memory: set[int] = set()  # sandboxes the kernel killed a process of for their memory cgroup

    def _message(self, timeout: float | None) -> dict | None:
        """The next message the zygote sent; None if none came within `timeout`."""
        while not self._pending:
            self.sock.settimeout(timeout)
            try:
                chunk = self.sock.recv(4096)
            except TimeoutError:
                return None
            except OSError as exc:
                raise Lost(str(exc)) from None
            if not chunk:
                raise Lost("the zygote closed the connection")
            try:
                self._pending += self._lines.feed(chunk)
            except framing.FrameError as exc:
                raise Lost(f"the zygote sent {exc}") from None
        return self._pending.pop(0)

    def request(self, sock: socket.socket, output: int, hidden: tuple[str, ...] = ()) -> None:
        """Ask for a sandbox that serves `sock` and writes to `output`, without waiting for its pid (`spawned` reads
        it); `hidden`: the folders it must not see (the zygote imports no preload from them)."""
        request = framing.encode({"preload": list(self.preload), "hidden": list(hidden)})
        try:
            socket.send_fds(self.sock, [request], [sock.fileno(), output])
        except OSError as exc:
            raise Lost(str(exc)) from None

    def spawned(self) -> int:
        """The pid of the sandbox asked for last (the zygote answers each request in turn)."""
        while True:
            message = self._message(READY_TIMEOUT)
            if message is None:
                raise Lost("the zygote did not start a sandbox")
            if "pid" in message:
                return int(message["pid"])
            self._exit(message)

    def _exit(self, message: dict) -> None:
        self._exits[int(message["exit"])] = int(message["status"])
        if message.get("oom"):
            self.out_of_memory.add(int(message["exit"]))

    def wait(self, pid: int, timeout: float | None) -> int | None:
        """The wait status of the sandbox `pid`, once it ended; None if it did not end within `timeout`."""
        while pid not in self._exits:
            message = self._message(timeout)
            if message is None:
                return None
            if "exit" in message:
                self._exit(message)
        return self._exits.pop(pid)


_channel: Channel | None = None


def use(channel: Channel | None) -> None:
    """In a judge: sandboxes come from the zygote over `channel` (None: they fork from the judge)."""
    global _channel
    _channel = channel


def channel() -> Channel | None:
    return _channel


# -- the zygote's side -------------------------------------------------------------------------------

def serve(control_fd: int) -> None:
    """The zygote's main loop: new judges' connections on `control_fd`, sandbox requests on each, the exit of
    each sandbox by its pidfd. Ends when the process that started it closes its end."""
    import torch

    from grader.sandbox import cgroup, isolation, process, warmup  # noqa: F401 - the sandbox runtime, imported here

    import torch.fx.experimental.symbolic_shapes  # as `judge.prewarm`: not once per sandbox

    isolation.protect_self()  # no process of our uid opens our descriptors (the judges' connections)
    cgroup.sweep()  # what the sandboxes of a zygote killed before it could clean left
    torch.set_num_threads(1)
    warmup.run()  # every sandbox's first module, backward and DataLoader: run once here
    gc.freeze()  # what we imported: never collected in a sandbox, so its pages stay shared
    control = socket.socket(fileno=control_fd)
    selector = selectors.DefaultSelector()
    selector.register(control, selectors.EVENT_READ, "control")
    children: dict[socket.socket, set[int]] = {}  # a judge's connection -> its live sandboxes
    spare = Spare()
    while True:
        idle = spare.pid is None and not any(children.values())
        events = selector.select(SPARE_AFTER if idle else None)
        if not events:
            cgroup.sweep()  # what a sandbox's end left busy a moment ago
            spare.make()  # nothing asked of us for a while, and no sandbox of ours running
        for key, _ in events:
            if key.data == "control":
                message, fds, _, _ = socket.recv_fds(control, 1, 1)
                if not message:  # the session is over
                    spare.discard()
                    for judge in list(children):
                        _drop(judge, selector, children)
                    os._exit(0)
                judge = socket.socket(fileno=fds[0])
                children[judge] = set()
                selector.register(judge, selectors.EVENT_READ, "judge")
            elif key.data == "judge":
                _request(key.fileobj, selector, children, spare)  # type: ignore[arg-type]
            else:
                pid, judge = key.data
                selector.unregister(key.fd)
                os.close(key.fd)
                _, status = os.waitpid(pid, 0)
                oom = cgroup.remove(pid)
                if judge in children:
                    children[judge].discard(pid)
                    _tell(judge, {"exit": pid, "status": status, "oom": oom})


def _request(judge: socket.socket, selector: selectors.BaseSelector, children: dict, spare: Spare) -> None:
    """A judge's request: its sandbox (the spare, or a fork) and an answer with the pid. A judge whose connection
    closed (or whose fork failed: that judge alone fails, a grader failure) has its sandboxes killed."""
    fds: list[int] = []
    pid = None
    try:
        message, fds, _, _ = socket.recv_fds(judge, 4096, 2)
        if message and len(fds) == 2:
            pid = _spawn(framing.decode(message), fds, selector, spare)
    except (OSError, ValueError, framing.FrameError):
        pass
    if pid is None:
        for fd in fds:
            os.close(fd)
        _drop(judge, selector, children)
        return
    children[judge].add(pid)
    selector.register(os.pidfd_open(pid), selectors.EVENT_READ, (pid, judge))
    _tell(judge, {"pid": pid})


def _drop(judge: socket.socket, selector: selectors.BaseSelector, children: dict) -> None:
    """Forget a judge: kill its live sandboxes (each is still reaped when its pidfd says it ended)."""
    for pid in children.pop(judge):
        _kill(pid)
    selector.unregister(judge)
    judge.close()


def _tell(judge: socket.socket, message: dict) -> None:
    try:
        judge.sendall(framing.encode(message))
    except OSError:
        pass  # the judge is gone: its connection's end is read next


def _kill(pid: int) -> None:
    for kill in (os.killpg, os.kill):
        try:
            kill(pid, signal.SIGKILL)
            return
        except (ProcessLookupError, PermissionError):
            pass


def _spawn(request: dict, fds: list[int], selector: selectors.BaseSelector, spare: Spare) -> int:
    """A sandbox for the descriptors a judge handed over (its connection, its output file): the spare when it has
    every module the request preloads, else a fork."""
    if preload(request.get("preload", []), tuple(request.get("hidden", []))):
        spare.discard()  # forked before these imports: it would import them itself, for seconds
    pid = spare.take(fds)
    if pid is None:
        pid = os.fork()
    if pid:
        for fd in fds:
            os.close(fd)
        return pid
    try:  # pragma: no cover - runs in the child
        from grader.sandbox import isolation

        selector.close()
        conn, out = fds
        isolation.close_all_but(fds)
        _sandbox(socket.socket(fileno=conn), out)
    finally:
        os._exit(4)


def preload(names: list[str], hidden: tuple[str, ...]) -> bool:
    """Import the public modules an exercise needs (torch._dynamo) once, here; never one from a folder sandboxes
    must not see (a checks folder, the solutions): the sandbox imports such a name itself, and fails there. So the
    zygote holds no module of a hidden folder, and its sandboxes have none to look for (`process.SHIPPED`).
    True if it imported any."""
    import importlib

    imported = len(sys.modules)
    for name in names:
        try:
            if not _lies_in(name, hidden):
                importlib.import_module(name)
        except Exception:  # the sandbox, importing it again, reports what fails
            pass
    if len(sys.modules) == imported:
        return False
    from grader.sandbox import warmup

    warmup.run()  # what the new modules make possible (torch._dynamo: the optimizers)
    gc.freeze()  # as at the start: a sandbox's collection never walks (and copies) what was just imported
    return True


SPARE_AFTER = 0.2  # seconds of quiet, no sandbox of ours running, before the next spare is forked


class Spare:
    """A sandbox forked ahead, while the zygote is idle, that waits for the descriptors of the judge it will serve:
    a judge's request then costs no fork of the zygote (10-15 ms of a warm grading, on its critical path). It is
    forked from the same clean state a sandbox forked on request starts from, and holds nothing else until then:
    only its end of a socketpair with the zygote. One at a time; a grading started while another runs (a batch)
    gets a fork, as before."""

    def __init__(self):
        self.pid: int | None = None
        self.sock: socket.socket | None = None

    def make(self) -> None:
        ours, theirs = socket.socketpair()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the spare
            _spare_main(theirs)
        theirs.close()
        self.pid, self.sock = pid, ours

    def take(self, fds: list[int]) -> int | None:
        """The spare's pid, once it has the judge's descriptors; None if there is none (or it died)."""
        pid, sock = self.pid, self.sock
        if pid is None or sock is None:
            return None
        try:
            socket.send_fds(sock, [b"s"], fds)
        except OSError:
            self.discard()
            return None
        sock.close()
        self.pid = self.sock = None
        return pid

    def discard(self) -> None:
        if self.pid is not None and self.sock is not None:
            self.sock.close()
            _kill(self.pid)
            os.waitpid(self.pid, 0)
        self.pid = self.sock = None


def _spare_main(sock: socket.socket) -> None:  # pragma: no cover - runs in the spare
    """Wait for a judge's descriptors (its connection, its output file), then become its sandbox; end with the
    zygote."""
    try:
        from grader.sandbox import isolation

        isolation.die_with_parent()
        isolation.close_all_but({sock.fileno()})
        _, fds, _, _ = socket.recv_fds(sock, 1, 2)
        if len(fds) == 2:
            conn, out = fds
            sock.close()
            _sandbox(socket.socket(fileno=conn), out)
    finally:
        os._exit(4)


def _lies_in(name: str, hidden: tuple[str, ...]) -> bool:
    """Whether module `name`, or a package on its way (finding a.b imports a), lies in one of the `hidden` folders."""
    import importlib.util

    from grader.sandbox import scrub

    parts = name.split(".")
    for prefix in (".".join(parts[:n]) for n in range(1, len(parts) + 1)):
        spec = importlib.util.find_spec(prefix)
        places = [spec.origin or "", *(spec.submodule_search_locations or [])] if spec else []
        if any(scrub.inside(place, hidden) for place in places):
            return True
    return False


def _sandbox(conn: socket.socket, out: int) -> None:  # pragma: no cover - runs in the zygote's child
    """Read the setup the judge sends, rebuild the probes, and become the sandbox (`process.sandbox_main`)."""
    from grader.sandbox import isolation, probe_shipping, probes, process, wire

    setup, _ = wire.recv(conn)
    source, limits, seed = process.setup_of(setup)
    plan = isolation.Plan(**{**setup["plan"], **{key: tuple(setup["plan"][key])
                                                  for key in ("private", "allowed", "emptied", "sockets")}})
    sys.modules.update(probe_shipping.install(setup["probes"], probes.PROBES))  # a probe's objects pickle by name
    process.SHIPPED = True  # we never imported a module of a hidden folder (`preload`), and rebuilt the probes
    del setup
    process.sandbox_main(conn, source, plan, limits, seed, out)
