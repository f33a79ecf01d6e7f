"""A Dask worker's side of `grade batch --cluster`: a worker plugin that keeps one warm grading process.

A Dask worker is a multi-threaded process: forking judges from it could hang (DESIGN.md's fork traps), so
the plugin starts a separate process, grader.cluster.worker_grader, that imports torch, the grader and the course
once, never computes, and forks a judge per submission. Each task (`grade_task`, run in one of the
worker's threads) hands one submission to it over a pipe and waits for the result. A worker that accepts the
batch (the fingerprint matches, the isolation layers required are there) offers the batch's Dask resource,
one per thread, so the scheduler sends the batch's tasks to accepting workers only.
"""

from __future__ import annotations

import asyncio
import io
import itertools
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import zipfile
from concurrent.futures import Future

from distributed import WorkerPlugin, get_worker
from distributed.core import Status

from grader import framing


class GraderGone(RuntimeError):
    """The warm grading process ended while a submission was in it."""


class WarmGrader:
    """The warm grading process of one worker, and the submissions in it (by request id)."""

    def __init__(self, config: dict):
        self.process = subprocess.Popen([sys.executable, "-m", "grader.cluster.worker_grader"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE)
        assert self.process.stdin is not None and self.process.stdout is not None
        self.stdin, self.stdout = self.process.stdin, self.process.stdout
        self.stdin.write(framing.encode(config))
        self.stdin.flush()
        line = self.stdout.readline()  # after its imports, the course check and the self-test
        self.hello = framing.decode(line) if line else {"refused": "its grading process ended as it started"}
        self.pending: dict[int, Future] = {}
        self.ids = itertools.count()
        self.lock = threading.Lock()
        self.gone = False
        threading.Thread(target=self._replies, daemon=True, name="torch-katas replies").start()

    def _replies(self) -> None:
        for line in self.stdout:
            reply = framing.decode(line)
            with self.lock:
                future = self.pending.pop(reply["id"])
            future.set_result(reply)
        with self.lock:
            self.gone = True
            for future in self.pending.values():
                future.set_exception(GraderGone(f"the grading process ended (exit status {self.process.wait()})"))
            self.pending.clear()

    def grade(self, request: dict) -> dict:
        """Grade one submission; its result dict."""
        future: Future = Future()
        with self.lock:
            if self.gone:
                raise GraderGone("the grading process has ended")
            key = next(self.ids)
            self.pending[key] = future
            try:
                self.stdin.write(framing.encode({**request, "id": key}))
                self.stdin.flush()
            except OSError as exc:  # it ended before the reader saw it
                self.pending.pop(key)
                raise GraderGone(f"the grading process has ended ({exc})") from None
        reply = future.result()
        if "error" in reply:
            raise RuntimeError(reply["error"])
        return reply["result"]

    def close(self) -> None:
        """End the process: its input closes, it stops its judges and exits."""
        try:
            self.stdin.close()
        except OSError:
            pass
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class GradingPlugin(WorkerPlugin):
    """Installed on every worker, present and future, for one batch (`name`). `config` says what to grade
    with (fingerprint, required layers); `course` is the zipped course, None for the built-in one."""

    def __init__(self, name: str, config: dict, course: bytes | None):
        self.name, self.config, self.course = name, config, course
        self.status: dict = {}
        self.grader: WarmGrader | None = None
        self.folder: str | None = None

    async def setup(self, worker) -> None:
        self.restart = threading.Lock()
        try:
            grader = await asyncio.get_running_loop().run_in_executor(None, self._start, worker.local_directory)
            hello = grader.hello
        except Exception as exc:  # reported to the batch as this worker's refusal
            hello = {"refused": f"could not start its grading process: {exc}"}
        self.status = {"worker": worker.address, "host": socket.gethostname(), "threads": worker.state.nthreads,
                       **hello}
        worker.log_event(self.name, self.status)
        if self.status.get("ready"):
            await worker.set_resources(**{self.name: worker.state.nthreads})
            if worker.status == Status.running:  # the scheduler looks again at tasks that had no worker
                worker.status = Status.paused
                worker.status = Status.running

    def _start(self, scratch: str) -> WarmGrader:
        """Unpack the course into the worker's scratch folder (hidden from learner code with it); start grading."""
        self.config = {**self.config, "hidden": [scratch]}
        if self.course is not None:
            self.folder = tempfile.mkdtemp(prefix="torch-katas-course-", dir=scratch)
            with zipfile.ZipFile(io.BytesIO(self.course)) as zf:
                zf.extractall(self.folder)
            self.config["course"] = self.folder
        self.grader = WarmGrader(self.config)
        return self.grader

    def grade(self, request: dict) -> dict:
        with self.restart:  # a grading process that ended (killed, out of memory) is started again
            grader = self.grader
            if grader is None or grader.gone or grader.process.poll() is not None:
                if grader is not None:
                    grader.close()
                grader = self.grader = WarmGrader(self.config)
                if not grader.hello.get("ready"):
                    raise GraderGone(f"its grading process could not start again: {grader.hello}")
        return grader.grade(request)

    def teardown(self, worker) -> None:
        if self.grader is not None:
            self.grader.close()
        if self.folder:
            shutil.rmtree(self.folder, ignore_errors=True)


def grade_task(name: str, request: dict) -> dict:
    """A Dask task: grade one submission in this worker's warm grading process."""
    plugin = get_worker().plugins[name]
    assert isinstance(plugin, GradingPlugin)
    return plugin.grade(request)
