"""The zygote (grader/sandbox/zygote.py) and the probes that travel as code (grader/sandbox/probe_shipping.py): a clean
start for every sandbox. The attacks on a sandbox's memory are in tests/test_integrity.py."""

import json
import os
import socket
import sys
import time
import types

import pytest

from grader.sandbox import probe_shipping, scrub, zygote
from grader.course.exercises import builtin_course
from grader.judge.grading import import_checks, probe_bundle
from grader.sandbox.probes import PROBES


def test_the_zygote_starts_with_an_environment_built_for_it_and_imports_no_check(monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_secret_token_1234")
    started = zygote.Zygote()
    try:
        with open(f"/proc/{started.process.pid}/environ", "rb") as f:
            env = dict(item.split(b"=", 1) for item in f.read().split(b"\0") if item)
        assert env[b"PATH"] == b"/usr/bin:/bin" and b"HF_TOKEN" not in env
        assert set(env) <= {k.encode() for k in (*zygote.clean_environment(), *zygote.PASSED)}
    finally:
        started.close()
    assert "HF_TOKEN" not in zygote.clean_environment()


def ask(channel: zygote.Channel) -> tuple[int, socket.socket]:
    """A sandbox asked of the zygote (its pid, and the judge's end of its connection): its setup never comes."""
    ours, theirs = socket.socketpair()
    output = os.open(os.devnull, os.O_WRONLY)
    channel.request(theirs, output)
    pid = channel.spawned()
    os.close(output)
    theirs.close()
    return pid, ours


def test_a_judges_sandboxes_end_when_its_connection_closes():
    started = zygote.Zygote()
    try:
        channel = zygote.Channel(started.connect())
        pid, ours = ask(channel)
        os.kill(pid, 0)  # alive
        channel.sock.close()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        else:
            pytest.fail("the sandbox outlived its judge's connection")
        ours.close()
    finally:
        started.close()


def test_the_zygote_reports_how_each_sandbox_ended():
    """A sandbox whose setup never comes is killed: the zygote sends its judge the wait status it reaped."""
    import signal

    started = zygote.Zygote()
    try:
        channel = zygote.Channel(started.connect())
        pid, ours = ask(channel)
        assert channel.wait(pid, 0.2) is None  # still running
        os.kill(pid, signal.SIGKILL)
        status = channel.wait(pid, 30)
        assert status is not None and os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
        ours.close()
    finally:
        started.close()


def children_of(pid: int) -> set[int]:
    found = set()
    for name in os.listdir("/proc"):
        try:
            with open(f"/proc/{name}/stat") as f:
                if name.isdigit() and int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                    found.add(int(name))
        except (OSError, ValueError, IndexError):
            pass
    return found


def spare_of(started: zygote.Zygote) -> int:
    """The spare sandbox the idle zygote forked ahead (it has no other child)."""
    deadline = time.monotonic() + 60
    while not (children := children_of(started.process.pid)):
        assert time.monotonic() < deadline, "no spare forked"
        time.sleep(0.05)
    (spare,) = children
    return spare


def test_an_idle_zygote_serves_the_next_judge_with_a_spare_forked_ahead_and_stale_spares_go():
    started = zygote.Zygote()
    try:
        channel = zygote.Channel(started.connect())
        spare = spare_of(started)
        pid, ours = ask(channel)
        assert pid == spare  # no fork on the request: the spare serves it
        ours.close()
        assert channel.wait(pid, 30) is not None  # it ended with its judge's connection, and was reaped
        spare = spare_of(started)  # idle again: a new spare
        channel.preload = ("tabnanny",)  # imported now: the spare, forked before, would not have it
        pid, ours = ask(channel)
        assert pid != spare and children_of(started.process.pid) == {pid}  # a fresh fork; the stale spare is gone
        ours.close()
    finally:
        started.close()
    assert not children_of(started.process.pid)


def test_every_built_in_probe_travels_as_code_without_its_reference_computations():
    for exercise in builtin_course().exercises():
        import_checks(exercise)
        shipped = json.loads(json.dumps(probe_bundle(exercise)))  # what goes over the wire: plain data
        registry: dict = {}
        saved = dict(PROBES)
        PROBES.clear()
        try:
            stand_ins = probe_shipping.install(shipped, PROBES)
            registry.update(PROBES)
        finally:
            PROBES.clear()
            PROBES.update(saved)
        own = {key for key in saved if key.startswith(exercise.checks_module + ".")}
        assert own <= set(registry), exercise.id
        for name, module in stand_ins.items():
            assert "__file__" not in vars(module), name  # a stand-in: only the names the probes use
    text = json.dumps(probe_bundle(builtin_course().find("ex05")))
    assert "observed_grads" in text and "expect_grads" not in text and "autograd_gradient" not in text


def test_a_probe_that_uses_a_reference_computation_cannot_travel(monkeypatch):
    from grader.checking.gradients import expect_gradient
    from grader.sandbox.probes import probe

    module = types.ModuleType("fake_checks")
    module.__file__ = "fake_checks.py"
    source = "def leaky(module, x):\n    return expect_gradient\n"
    exec(compile(source, module.__file__, "exec"), vars(module))
    module.expect_gradient = expect_gradient
    monkeypatch.setitem(sys.modules, "fake_checks", module)
    monkeypatch.setattr("inspect.getsource", lambda obj: source)
    monkeypatch.setattr("inspect.getsourcelines", lambda obj: ([source], 1))
    fn = probe(module.leaky)
    try:
        with pytest.raises(probe_shipping.NotShippable, match="reference computations stay in the judge"):
            probe_shipping.bundle(PROBES, {"fake_checks"}, scrub.check_modules(PROBES, ()))
    finally:
        PROBES.pop(fn.probe_name)


def test_a_zygote_that_dies_mid_grading_is_the_graders_failure_never_a_grade():
    import select

    from conftest import ROOT
    from grader.course.exercises import find_exercise
    from grader.judge.grading import Grading
    from grader.sandbox.source import load_source

    started = zygote.shared()
    assert started is not None
    grading = Grading(find_exercise("ex05"), load_source(ROOT / "tests" / "attacks" / "sleep_at_import.py"),
                      time_limit=30)
    children = f"/proc/{started.process.pid}/task/{started.process.pid}/children"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not open(children).read().strip():
        time.sleep(0.05)
    started.process.kill()  # a sandbox is running (it sleeps at import)
    started.process.wait()
    while not (select.select([grading], [], [], max(0.0, grading.deadline - time.monotonic()))[0] and grading.feed()):
        pass
    result = grading.result()
    assert result.grader_failure and result.status == "error" and result.score == 0
    assert zygote.shared() is not started  # the next grading gets a fresh one


def test_the_zygote_imports_no_preload_from_a_folder_sandboxes_must_not_see(tmp_path, monkeypatch):
    """So a sandbox of the zygote's has no module of a hidden folder to look for (sandbox.SHIPPED)."""
    package = tmp_path / "course_helpers"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "secrets.py").write_text("ANSWER = 42\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("course_helpers.secrets", "course_helpers"):
        zygote.preload([name], hidden=(str(tmp_path),))
        assert "course_helpers" not in sys.modules and "course_helpers.secrets" not in sys.modules
    zygote.preload(["course_helpers.secrets"], hidden=("/elsewhere",))  # not hidden: imported once, here
    assert sys.modules["course_helpers.secrets"].ANSWER == 42
    for name in ("course_helpers.secrets", "course_helpers"):
        monkeypatch.delitem(sys.modules, name)
