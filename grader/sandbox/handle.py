"""The judge's handle of one sandbox: start it (from the zygote, or a fork of the judge; on the portable backend, a
spawned process: portable.py), send it requests, read its replies, kill it and tell how it ended.

Runs in: the judge. Trusted; everything it reads from the sandbox is hostile input (wire.py bounds it).
"""

from __future__ import annotations

import dataclasses
import multiprocessing
import os
import signal
import socket
import tempfile
import time
from typing import NoReturn

from grader.sandbox import backend, cgroup, isolation, portable, probe_shipping, safefs, wire, zygote
from grader.sandbox.limits import Limits
from grader.sandbox.problems import LearnerCrashed, LearnerProblem, LearnerTimeout, ZygoteLost
from grader.sandbox.probes import PROBES
from grader.sandbox.process import learner_environment, sandbox_main
from grader.sandbox.source import Source
from grader.text import Text

TOP_LEVEL = Text("your file's top-level code", "你的文件的顶层代码")


def _describe_exit(status: int, memory: int = 0) -> tuple[type[LearnerProblem], Text]:
    """How the sandbox ended, in words; `memory`: the budget its memory cgroup saw passed (0: it was not)."""
    if memory:
        return LearnerCrashed, Text("used more memory than its limit of {mib} MiB (its processes and the files it "
                                    "wrote together), and the system stopped it: is a tensor, a list or a file far "
                                    "larger than needed?",
                                    "使用的内存超过了 {mib} MiB 的上限（进程和它写的文件合计），被系统终止了："
                                    "是不是某个 tensor、列表或文件远大于需要？", mib=memory >> 20)
    if hasattr(os, "WIFSIGNALED") and os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGXCPU:
            return LearnerTimeout, Text("used up its CPU time limit", "用完了 CPU 时间限额")
        if sig == signal.SIGSEGV:
            return LearnerCrashed, Text("crashed with a segmentation fault (SIGSEGV)", "因段错误（SIGSEGV）崩溃了")
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = str(sig)
        return LearnerCrashed, Text("was killed by signal {name}", "被信号 {name} 终止了", name=name)
    code = os.WEXITSTATUS(status) if hasattr(os, "WEXITSTATUS") else status
    return LearnerCrashed, Text("ended the process with exit status {code} (os._exit() or similar)",
                                "以退出状态 {code} 结束了进程（os._exit() 或类似调用）", code=code)


def _grader_lost(channel: zygote.Channel) -> NoReturn:
    """The zygote is gone. A judge ends without its `end`, which the parent records as the grader's failure (never
    a grade); elsewhere the caller is told."""
    if channel.judge:
        os._exit(70)
    raise ZygoteLost(Text("the process that starts sandboxes (the zygote) ended", "启动沙箱的进程（zygote）已结束"))


class Sandbox:
    """One sandbox process for one submission, driven by the judge (forked by the zygote, or by the judge itself
    when there is none: see zygote.py)."""

    def __init__(self, source: Source, limits: Limits, seed: int = 0):
        self.source = source
        self.limits = limits
        self.seed = seed
        self.pid: int | None = None
        self.sock: socket.socket | None = None
        self.spawner: zygote.Channel | None = None
        self.asked = False  # a sandbox asked of the zygote, whose pid is not read yet (`_spawned`)
        self.process: multiprocessing.process.BaseProcess | None = None  # the portable backend's spawned sandbox
        self.workdir = tempfile.mkdtemp(prefix="torch-katas-", dir=limits.workroot)
        self.output_fd = os.open(os.path.join(self.workdir, ".output"),
                                 os.O_RDWR | os.O_CREAT | os.O_EXCL | safefs.NO_LINK, 0o600)
        self.load_reply: dict = {}
        self.problem: LearnerProblem | None = None  # set once the process died or hung
        self.out_of_memory = False  # its memory cgroup saw a process killed for passing the limit

    def launch(self) -> None:
        """Start the process, which loads the learner's code while the caller goes on (`start` waits for it)."""
        parent, child = socket.socketpair()
        if backend.portable():
            self._start_portable(parent, child)
            return
        emptied, sockets = isolation.user_folders()
        plan = isolation.Plan(self.workdir, list(self.limits.hidden), self.limits.cuda, disk=self.limits.scratch(),
                              memory=self.limits.memory, emptied=tuple(emptied), sockets=tuple(sockets))
        self.spawner = zygote.channel()
        probes = None
        if self.spawner is not None:
            try:
                probes = self.spawner.probes()
            except probe_shipping.NotShippable:  # a course's probe that cannot travel: forked here, as without a zygote
                self.spawner = None
        if self.spawner is not None:
            self._spawn(parent, child, plan, probes)
        else:
            self.pid = os.fork()
            if self.pid == 0:  # pragma: no cover - runs in the child
                parent.close()
                sandbox_main(child, self.source, plan, self.limits, self.seed, self.output_fd)
        child.close()
        self.sock = parent

    def start(self) -> dict:
        """The load reply: launched first if it was not (the learner's code is loaded, or why it was not)."""
        if self.sock is None:
            self.launch()
        self._spawned()
        if self.process is not None:  # a spawned sandbox starts Python and imports torch first: not the learner's time
            self._receive(zygote.READY_TIMEOUT, TOP_LEVEL)
        self.load_reply = self._receive(self.limits.time, TOP_LEVEL)[0]
        return self.load_reply

    def _spawn(self, parent: socket.socket, child: socket.socket, plan: isolation.Plan, probes) -> None:
        """A sandbox from the zygote: it forks a clean child, which reads this setup from its connection. Its pid
        is read when it is needed (`_spawned`): the judge goes on meanwhile."""
        assert self.spawner is not None
        try:
            self.spawner.request(child, self.output_fd, self.limits.hidden)
        except zygote.Lost:
            _grader_lost(self.spawner)
        self.asked = True
        self.spawner.waiting.append(self)
        setup = {**self.setup(probes), "plan": {**dataclasses.asdict(plan), "allowed": plan.readable()}}  # computed
        try:  # once in the parent
            wire.send(parent, setup)
        except OSError:
            pass  # it died at once: _receive reports how

    def setup(self, probes) -> dict:
        """What a sandbox not forked from this judge is sent first (process.setup_of reads it)."""
        source = self.source
        return {"source": {"chunks": [list(chunk) for chunk in source.chunks], "filename": source.filename,
                           "path": str(source.path), "notebook": source.notebook, "cells": source.cells},
                "limits": dataclasses.asdict(self.limits), "seed": self.seed, "probes": probes}

    def _start_portable(self, parent: socket.socket, child: socket.socket) -> None:
        """A spawned sandbox (portable.py), sent its setup: the probes' code, or the names of their modules where it
        cannot travel (that backend hides no file from learner code anyway)."""
        shipping = portable.shipping()
        setup = {**self.setup({}), "workdir": self.workdir, "preload": list(shipping.preload)}
        try:
            setup["probes"] = shipping.probes()
        except probe_shipping.NotShippable:
            setup["probe_modules"] = sorted({fn.__module__ for fn in PROBES.values()})
        self.process = portable.start(child, learner_environment(self.workdir))
        self.pid = self.process.pid
        child.close()
        self.sock = parent
        try:
            wire.send(parent, setup)
        except OSError:
            pass  # it died at once: _receive reports how

    def _spawned(self) -> None:
        """The pid of the sandbox asked of the zygote, once the zygote answered (and those of the sandboxes asked
        before it: the zygote answers in turn)."""
        if self.asked:
            assert self.spawner is not None
            try:
                while self.asked:
                    first = self.spawner.waiting.pop(0)
                    first.pid, first.asked = self.spawner.spawned(), False
            except zygote.Lost:
                _grader_lost(self.spawner)

    @property
    def alive(self) -> bool:
        return (self.pid is not None or self.asked) and self.problem is None

    def request(self, header: dict, blobs: list[bytes], what: str | Text) -> tuple[dict, list[bytes]]:
        assert self.sock is not None, "start() first"
        try:
            wire.send(self.sock, header, blobs)
        except OSError:
            pass  # the process is gone: _receive reports how it ended
        return self._receive(self.limits.time, what)

    def _receive(self, timeout: float, what: str | Text) -> tuple[dict, list[bytes]]:
        assert self.sock is not None, "start() first"
        self.sock.settimeout(timeout)
        try:
            return wire.recv(self.sock)
        except TimeoutError:
            self.kill()
            self.problem = LearnerTimeout(Text(
                "{what} did not finish within {timeout:g} s: is there an endless loop, or a loop that never stops?",
                "{what} 在 {timeout:g} 秒内没有完成：是否有死循环，或者循环没有结束条件？", what=what, timeout=timeout))
        except (EOFError, OSError, wire.ProtocolError):
            status = self.kill(grace=0.5)
            kind, text = _describe_exit(status, self.out_of_memory and self.limits.memory)
            self.problem = kind(Text("While running {what}, your code {text}.", "运行 {what} 时，你的代码{text}。",
                                     what=what, text=text))
        raise self.problem

    def kill(self, grace: float = 0.0) -> int:
        """Kill the sandbox's whole process group; return its wait status.

        With `grace`, a process that is already ending gets that long to exit by itself first, so
        its own exit status (not our SIGKILL) is what gets reported.
        """
        self._spawned()
        if self.pid is None:
            return 0
        if self.process is not None:
            return self._end_portable(grace)
        if self.spawner is not None:
            return self._end_spawned(grace)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self._kill_group()
                return self._reaped(status)
            time.sleep(0.01)
        self._kill_group()
        try:
            _, status = os.waitpid(self.pid, 0)
        except ChildProcessError:
            status = 0
        return self._reaped(status)

    def _end_portable(self, grace: float) -> int:
        """`kill` for a spawned sandbox: its process group where there are groups (what it started goes too)."""
        assert self.process is not None
        self.process.join(grace)
        if self.process.exitcode is None:
            try:
                os.killpg(self.pid, signal.SIGKILL)  # type: ignore[arg-type]  # set with the process
            except (AttributeError, ProcessLookupError, PermissionError):  # no groups (Windows), or not its own yet
                self.process.kill()
            self.process.join()
        status = portable.wait_status(self.process.exitcode)
        self.process.close()
        self.process = self.pid = None
        return status

    def _reaped(self, status: int) -> int:
        """A sandbox forked here was reaped: its memory cgroup goes (read first: did it run out?)."""
        assert self.pid is not None
        self.out_of_memory = cgroup.remove(self.pid)
        self.pid = None
        return status

    def _end_spawned(self, grace: float) -> int:
        """`kill` for a sandbox of the zygote's: its wait status comes from the zygote, which reaped it."""
        assert self.spawner is not None and self.pid is not None
        try:
            status = self.spawner.wait(self.pid, grace) if grace else None
            self._kill_group()
            if status is None:
                status = self.spawner.wait(self.pid, zygote.READY_TIMEOUT)
        except zygote.Lost:
            status = None
        if status is None:  # the zygote is gone, and its sandboxes with it (PR_SET_PDEATHSIG)
            if self.spawner.judge:
                _grader_lost(self.spawner)
            status = signal.SIGKILL  # the wait status of a process killed by SIGKILL
        self.out_of_memory = self.pid in self.spawner.out_of_memory
        self.pid = None
        return status

    def _kill_group(self) -> None:
        if self.pid is None:
            return
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):  # not yet its own group leader
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass

    def output(self) -> str:
        """What learner code printed: read through the descriptor opened before it ran (never by name)."""
        try:
            data = safefs.read_fd(self.output_fd, self.limits.output)
        except OSError:
            return ""
        return data.decode("utf-8", "replace")

    def close(self) -> None:
        if self.spawner is not None:  # the zygote reaps it: its exit status is of no use any more, nor worth a wait
            self._spawned()
            try:
                if self.pid is not None and self.spawner.wait(self.pid, 0.001) is None:  # not reaped yet: still ours
                    self._kill_group()
            except zygote.Lost:
                pass  # the zygote is gone, and its sandboxes with it
            self.pid = None
        self.kill()
        if self.sock is not None:
            self.sock.close()
        if self.output_fd >= 0:
            os.close(self.output_fd)
            self.output_fd = -1
        safefs.remove_tree(self.workdir)
