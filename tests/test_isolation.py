"""Each isolation layer alone, applied in a forked child as the sandbox applies it, against the attacks it is
meant to stop; and with no layer, the same attacks succeed (so each test proves something).

The process tree mirrors grading: this test process forks a "judge" (non-dumpable, holding a pipe, as the
real judge does), which forks the "sandbox" that applies one layer and attempts one attack on the judge.
The table in docs/security.md is this file's matrix.
"""

import ctypes
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from conftest import NAMESPACES
from grader.sandbox import isolation

ABI = isolation.landlock_abi()


def attempt(name: str, ctx: dict) -> bool:
    """Run one attack in the sandbox child; True if it succeeded."""
    judge = ctx["judge"]
    try:
        if name == "open the judge's pipe":
            open(f"/proc/{judge}/fd/{ctx['pipe']}", "w").close()
        elif name == "signal the judge":
            os.kill(judge, 0)
        elif name == "ptrace the judge":
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.ptrace(0x4206, judge, None, None) != 0:  # PTRACE_SEIZE
                return False
            libc.ptrace(17, judge, None, None)
        elif name == "read a hidden folder":
            open(ctx["secret"]).read()
        elif name == "write outside the work dir":
            Path(ctx["outside"]).write_text("planted")
            return Path(ctx["outside"]).exists()
        elif name == "connect to 127.0.0.1":
            socket.create_connection(("127.0.0.1", ctx["port"]), timeout=2).close()
        elif name == "see other processes":
            return any(p.isdigit() and int(p) not in (os.getpid(), 1) for p in os.listdir("/proc"))
        elif name == "run a program":
            subprocess.run(["/bin/true"], check=True)
        elif name == "fork 600 processes":
            return fork_many(600) == 600
        return True
    except (OSError, subprocess.SubprocessError):
        return False


def fork_many(n: int) -> int:
    """Fork up to `n` children that wait (a fork bomb that stops by itself); how many were made."""
    children = []
    try:
        for _ in range(n):
            pid = os.fork()
            if pid == 0:
                time.sleep(60)
                os._exit(0)
            children.append(pid)
    except OSError:
        pass
    for pid in children:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
    return len(children)


def apply_layer(layer: str, ctx: dict) -> None:
    """In the sandbox child: apply one layer; for namespaces, fork into the new PID namespace first."""
    plan = isolation.Plan(ctx["workdir"], hidden=[ctx["hidden"]])
    if layer in ("namespaces", "process limit"):
        isolation.unshare_all()
        if os.fork():
            _, status = os.waitpid(-1, 0)
            os._exit(os.waitstatus_to_exitcode(status) & 0xFF)
        isolation.build_mounts(plan.workdir, plan.hidden, plan.readable())
        if layer == "process limit":
            isolation.limit_processes(isolation.PROCESS_LIMIT)
        isolation.drop_capabilities()  # the sandbox never keeps the namespace's capabilities
    elif layer == "landlock":
        isolation.landlock(plan.readable(), plan.writable(), plan.devices(), ABI)
    elif layer == "seccomp":
        isolation.apply_seccomp()
    elif layer == "no capabilities":
        isolation.drop_capabilities()


def run_attack(layer: str | None, name: str, tmp: Path) -> bool:
    """Fork a judge and its sandbox; apply `layer` (None: none) in the sandbox; True if the attack worked."""
    hidden = tmp / "solutions"
    hidden.mkdir(exist_ok=True)
    (hidden / "answer.py").write_text("ANSWER = 42\n")
    workdir = Path(tempfile.mkdtemp(prefix="torch-katas-test-work-"))
    server = socket.create_server(("127.0.0.1", 0))
    result_r, result_w = os.pipe()
    judge = os.fork()
    if judge == 0:  # the judge: non-dumpable, holding a pipe like its result pipe
        status = 1
        try:
            isolation.protect_self()
            pipe_r, pipe_w = os.pipe()
            ctx = {"judge": os.getpid(), "pipe": pipe_w, "secret": str(hidden / "answer.py"), "hidden": str(hidden),
                   "workdir": str(workdir), "outside": str(tmp / f"outside-{os.getpid()}"),
                   "port": server.getsockname()[1]}
            sandbox = os.fork()
            if sandbox == 0:
                try:
                    isolation.die_with_parent()
                    if layer:
                        apply_layer(layer, ctx)
                    os.write(result_w, json.dumps(attempt(name, ctx)).encode())
                finally:
                    os._exit(0)
            os.waitpid(sandbox, 0)
            status = 0
        finally:
            os._exit(status)
    os.close(result_w)
    server.close()
    data = os.read(result_r, 100)
    os.close(result_r)
    os.waitpid(judge, 0)
    assert data, f"the sandbox with {layer} reported nothing"
    return json.loads(data)


ATTACKS = ["open the judge's pipe", "signal the judge", "ptrace the judge", "read a hidden folder",
           "write outside the work dir", "connect to 127.0.0.1", "see other processes", "run a program",
           "fork 600 processes"]

# layer -> the attacks it stops on its own (docs/security.md shows the same table)
STOPS = {
    "namespaces": ["open the judge's pipe", "signal the judge", "ptrace the judge", "read a hidden folder",
                   "write outside the work dir", "connect to 127.0.0.1", "see other processes"],
    "landlock": ["open the judge's pipe", "signal the judge", "ptrace the judge", "read a hidden folder",
                 "write outside the work dir", "connect to 127.0.0.1", "run a program"],
    "seccomp": ["ptrace the judge"],
    "no capabilities": ["open the judge's pipe", "ptrace the judge"],
    "process limit": ["fork 600 processes"],
}
NEEDS = {("landlock", "connect to 127.0.0.1"): 4, ("landlock", "signal the judge"): 6}


def skip_unless_available(layer: str, name: str) -> None:
    if layer == "namespaces" and not NAMESPACES:
        pytest.skip("this kernel refuses unprivileged user namespaces: the namespaces layer is off here")
    if layer == "landlock" and ABI < NEEDS.get((layer, name), 1):
        pytest.skip(f"Landlock ABI {ABI} here; stopping this needs ABI {NEEDS.get((layer, name), 1)}")
    if layer == "process limit" and (not NAMESPACES or not isolation.pid_max_per_namespace()):
        pytest.skip("the process limit needs namespaces and Linux 6.14+ (a pid_max per PID namespace)")
    if layer == "seccomp" and os.uname().machine != "x86_64":
        pytest.skip("the seccomp deny-list is written for x86_64")


@pytest.mark.parametrize("name", ATTACKS)
def test_without_isolation_the_attack_works(name, tmp_path):
    """The baseline: a plain forked process of the grader's uid can do each of these."""
    if name in ("open the judge's pipe", "ptrace the judge") and os.geteuid() != 0:
        pytest.skip("the judge is non-dumpable: for an ordinary user that alone refuses this")
    assert run_attack(None, name, tmp_path), f"{name} should work without any layer"


@pytest.mark.parametrize("layer,name", [(layer, name) for layer, names in STOPS.items() for name in names])
def test_one_layer_alone_stops_the_attack(layer, name, tmp_path):
    skip_unless_available(layer, name)
    if layer == "no capabilities" and os.geteuid() != 0:
        pytest.skip("capabilities matter for root; an ordinary user has none to drop")
    assert not run_attack(layer, name, tmp_path), f"{layer} alone should stop: {name}"


def test_the_seccomp_filter_refuses_namespaces_but_lets_torch_fork(tmp_path):
    if os.uname().machine != "x86_64":
        pytest.skip("the seccomp deny-list is written for x86_64")
    pid = os.fork()
    if pid == 0:
        try:
            isolation.apply_seccomp()
            child = os.fork()  # what DataLoader workers do
            if child == 0:
                os._exit(7)
            forked = os.waitpid(child, 0)[1] >> 8 == 7
            try:
                isolation.unshare_all()
                escaped = True
            except OSError:
                escaped = False
            os._exit(0 if forked and not escaped else 1)
        except BaseException:
            os._exit(2)
    assert os.waitpid(pid, 0)[1] == 0


def test_killing_the_sandbox_kills_what_it_started():
    """The sandbox is PID 1 of its namespace: when it ends, every process it started ends, even one that left
    its process group with setsid."""
    if not NAMESPACES:
        pytest.skip("no namespaces here")
    seconds = f"{300 + os.getpid() % 1000 / 1000:.3f}"  # a command line no other process has
    pid = os.fork()
    if pid == 0:
        isolation.unshare_all()
        if os.fork():
            os._exit(os.waitstatus_to_exitcode(os.waitpid(-1, 0)[1]))
        if os.fork() == 0:
            os.setsid()
            os.execvp("sleep", ["sleep", seconds])
        time.sleep(0.3)
        running = subprocess.run(["pgrep", "-fx", f"sleep {seconds}"], capture_output=True).returncode == 0
        os._exit(0 if running else 1)  # PID 1 ends here, with the orphan-to-be still running
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0, "the process to be orphaned never ran"
    time.sleep(0.3)
    assert subprocess.run(["pgrep", "-fx", f"sleep {seconds}"], capture_output=True).returncode == 1


def test_what_python_reads_under_tmp_stays_and_the_rest_of_tmp_goes(tmp_path):
    """The sandbox gets an empty /tmp of its own; a checkout or a venv that lies under /tmp (tmp_path does)
    is bound back in place, so torch's lazy imports still find their files, and nothing else of /tmp is."""
    if not NAMESPACES:
        pytest.skip("no namespaces here")
    venv, other = tmp_path / "venv" / "site-packages", Path(tempfile.mkdtemp(prefix="torch-katas-test-other-"))
    venv.mkdir(parents=True)
    (venv / "single_file_module.py").write_text("Y = 2\n")
    (venv / "lazy_module.py").write_text("X = 1\n")
    (other / "secret.txt").write_text("classmate's\n")
    workdir = tempfile.mkdtemp(prefix="torch-katas-test-work-")
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            isolation.unshare_all()
            if os.fork():
                os._exit(os.waitstatus_to_exitcode(os.waitpid(-1, 0)[1]))
            isolation.build_mounts(workdir, [], [str(venv)])
            code = 0 if ((venv / "lazy_module.py").read_text() == "X = 1\n" and not other.exists()
                         and (venv / "single_file_module.py").exists() and os.path.isdir(workdir)) else 3
        finally:
            os._exit(code)
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
    shutil.rmtree(other)
