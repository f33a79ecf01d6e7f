"""The warm grading service: its lifecycle, its safety, and results identical to grading without it.

Each test has a socket folder of its own (TORCH_KATAS_SERVER_DIR), never the user's, and every service a
test started is stopped by the `service` fixture's finalizer, which also proves nothing is left behind.
"""

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, gone, wait_for
from grader.service import client, address

pytestmark = pytest.mark.slow

SOLUTION = ROOT / "solutions" / "ex05_manual_backward.py"
MISTAKE = ROOT / "tests" / "mistakes" / "ex05_manual_backward" / "sign_flipped.py"


def comparable(result: dict) -> dict:
    return {k: v for k, v in result.items() if k != "duration_s"}


def test_start_status_stop_leave_nothing_behind(service):
    assert json.loads(service.grade("server", "status", "--json").stdout) is None
    assert service.grade("server", "start").returncode == 0
    info = service.status()
    assert info["pid"] and info["graded"] == 0 and info["idle_stop_s"] == client.IDLE_DEFAULT
    assert oct(service.folder.stat().st_mode & 0o777) == "0o700"
    assert sorted(service.left()) == sorted(path(service.folder).name for path in (client.socket_path, client.pid_path,
                                                                               client.front_path, client.secret_path))
    proc = service.grade("server", "stop")
    assert proc.returncode == 0 and "Stopped" in proc.stdout
    assert gone(info["pid"]) and gone(info["front"]) and service.left() == []
    assert "No grading service" in service.grade("server", "stop").stdout


def test_results_are_the_same_with_and_without_the_service(service):
    cases = [("ex05", SOLUTION), ("ex05", MISTAKE), ("ex09", ROOT / "solutions" / "ex09_optimizers.py"),
             ("ex01", ROOT / "exercises" / "ex01_tensors" / "ex01_tensors.py")]
    for n, (exercise, path) in enumerate(cases, 1):
        assert path.is_file(), path
        served = service.grade(exercise, "--file", path, "--json", "--seed", "7")
        here = service.grade(exercise, "--file", path, "--json", "--seed", "7", "--no-server")
        assert served.returncode == here.returncode
        assert comparable(json.loads(served.stdout)) == comparable(json.loads(here.stdout))
        assert service.status()["graded"] == n  # the first went through the service, the second did not
    text = [service.grade("ex05", "--file", MISTAKE, "--seed", "7", *flag).stdout for flag in ((), ("--no-server",))]
    assert text[0].split("Score:")[0] == text[1].split("Score:")[0] and "opposite sign" in text[0]


def test_an_idle_service_forks_a_spare_judge_that_judges_the_next_grading_as_a_fork_would(service):
    assert service.grade("ex05", "--file", SOLUTION).returncode == 0  # starts it
    wait_for(lambda: (service.status() or {}).get("spare"), "a spare judge forked once warm and idle")
    spare = service.status()["spare"]
    served = service.grade("ex05", "--file", MISTAKE, "--json", "--seed", "7")
    assert service.status()["spared"] == 1  # it judged this grading, then ended
    wait_for(lambda: gone(spare), "the spare judge ended with its grading")
    here = service.grade("ex05", "--file", MISTAKE, "--json", "--seed", "7", "--no-server")
    assert served.returncode == here.returncode == 1
    assert comparable(json.loads(served.stdout)) == comparable(json.loads(here.stdout))
    wait_for(lambda: service.status()["spare"] not in (None, spare), "the next spare")  # the fixture: none left


def test_it_stops_when_idle(service):
    service.env[client.IDLE_ENV] = "0.5"
    assert service.grade("ex05", "--file", SOLUTION, env={client.IDLE_ENV: "0.5"}).returncode == 0
    pid = int(client.pid_path(service.folder).read_text())
    service.pids.add(pid)
    wait_for(lambda: gone(pid), "the idle service stopped")
    assert service.left() == []


def test_a_changed_check_restarts_it_and_is_seen(service, tmp_path):
    course = tmp_path / "course"
    assert service.grade("new", "hw1", "--course", course).returncode == 0
    first = service.grade("--course", course, "hw1", "--file", course / "solutions" / "hw1.py", "--json")
    assert json.loads(first.stdout)["score"] == 3
    before = service.status()["pid"]
    checks = course / "checks" / "hw1.py"
    checks.write_text(checks.read_text().replace("double(x) returns twice x", "double(x) is 2x"))
    solution = course / "solutions" / "hw1.py"
    second = json.loads(service.grade("--course", course, "hw1", "--file", solution, "--json").stdout)
    assert [c["title"] for c in second["checks"]] == ["double(x) returns a tensor of x's shape and dtype",
                                                      "double(x) is 2x"]
    after = service.status()["pid"]
    assert after != before
    wait_for(lambda: gone(before), "the service of the old check stopped")


def test_a_stale_socket_and_pid_file_are_replaced(service):
    for path in (client.socket_path(service.folder), client.front_path(service.folder)):
        stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        stale.bind(str(path))
        stale.close()  # a socket file nobody listens on: what a killed service (and its front) leaves
    client.pid_path(service.folder).write_text("999999")
    proc = service.grade("ex05", "--file", SOLUTION, "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["score"] == 10
    assert service.status()["graded"] == 1


def test_a_service_killed_mid_grading_is_never_a_grade(service, tmp_path):
    slow = tmp_path / "slow.py"
    slow.write_text("import time\ntime.sleep(3)\n" + SOLUTION.read_text())
    assert service.grade("server", "start").returncode == 0
    pid = service.status()["pid"]
    proc = subprocess.Popen([sys.executable, "-m", "grader", "ex05", "--file", str(slow), "--json"], cwd=ROOT,
                            env=service.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for(lambda: service.status()["running"] == 1, "the grading is in flight")
    os.kill(pid, signal.SIGKILL)
    out, err = proc.communicate(timeout=300)
    result = json.loads(out)
    assert proc.returncode == 0 and result["score"] == 10 and not result.get("grader_failure"), err
    wait_for(lambda: gone(pid), "the killed service is reaped")
    for leftover in (client.socket_path, client.pid_path, client.front_path):  # what the killed service left
        leftover(service.folder).unlink()


def test_two_clients_at_once_are_both_answered_by_one_service(service):
    procs = [subprocess.Popen([sys.executable, "-m", "grader", "ex05", "--file", str(path), "--json"], cwd=ROOT,
                              env=service.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for path in (SOLUTION, MISTAKE)]
    results = [json.loads(p.communicate(timeout=300)[0]) for p in procs]
    assert [r["score"] for r in results] == [10, 6]
    assert service.status()["graded"] == 2  # both started it at once: one service answered both


def test_ci_and_the_variable_start_no_service(service):
    for env in ({"CI": "true"}, {address.NO_SERVER_ENV: "1"}):
        assert service.grade("ex05", "--file", SOLUTION, env=env).returncode == 0
        assert service.left() == []


def test_a_service_of_another_version_is_never_used(service):
    assert service.grade("server", "start").returncode == 0
    pid = service.status()["pid"]
    old = {**address.signed({"op": "status"}), "version": "0.0.1"}
    answer = client.exchange(client.connect(service.folder), service.folder, old)
    assert "restart" in answer and client.connect(service.folder) is None
    wait_for(lambda: gone(pid), "the service of another version stopped")
    client.pid_path(service.folder).exists() and client.pid_path(service.folder).unlink()


def test_a_folder_others_can_enter_is_refused(tmp_path, monkeypatch):
    open_folder = tmp_path / "open"
    open_folder.mkdir(mode=0o755)
    open_folder.chmod(0o755)
    monkeypatch.setenv(address.DIR_ENV, str(open_folder))
    with pytest.raises(address.ServiceError):
        client.service_dir()


def as_nobody(action) -> int:
    """Run `action()` in a forked child as the uid `nobody`; its exit status (0: it returned True)."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            os._exit(0 if action() else 1)
        except BaseException:
            os._exit(2)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def test_another_uid_is_refused_both_ways(service):
    if os.geteuid() != 0:
        pytest.skip("running a client as another uid needs root")
    assert service.grade("server", "start").returncode == 0
    service.status()
    service.folder.chmod(0o711)  # only so that another uid can reach the socket at all (the folder is 0700)
    client.socket_path(service.folder).chmod(0o777)

    def client_refuses_the_server():
        try:
            client.connect(service.folder)
        except address.ServiceError:
            return True
        return False

    def server_refuses_the_client():  # it closes the connection unanswered, whatever is sent
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(str(client.socket_path(service.folder)))
        try:
            sock.sendall(b'{"hello": "n"}\n')
            return sock.recv(4096) == b""
        except (BrokenPipeError, ConnectionResetError):
            return True

    try:
        assert as_nobody(client_refuses_the_server) == 0
        assert as_nobody(server_refuses_the_client) == 0
    finally:
        service.folder.chmod(0o700)
    assert service.status()["graded"] == 0


def test_check_in_a_kernel_goes_through_the_service_and_never_forks(service, monkeypatch, tmp_path):
    from grader.learner.jupyter import check

    monkeypatch.chdir(tmp_path)  # no workspace: nothing recorded

    def no_fork():
        raise AssertionError("check() forked the kernel")

    monkeypatch.setattr(os, "fork", no_fork)
    cells = [SOLUTION.read_text(), 'from grader import check\ncheck("ex05")']
    shown = check("ex05", cells=cells, lang="en")
    assert shown.passed and shown.result.score == 10
    monkeypatch.undo()
    assert service.status()["graded"] == 1


# -- the front: `grade EXERCISE` run on the learner's terminal by the service's front (relay.py) ---------------

NO_CLICK = "import sys; sys.modules['click'] = None; from grader.cli.entry import main; main()"  # no CLI can run


def relayed(service, *args, **kwargs) -> subprocess.CompletedProcess:
    """`grade ARGS` from a client that cannot run the command itself (no click): it works only if relayed."""
    return subprocess.run([sys.executable, "-c", NO_CLICK, *map(str, args)], cwd=kwargs.pop("cwd", ROOT),
                          env=service.env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)


def test_a_grading_is_relayed_with_the_same_output_files_and_exit_status(service, tmp_path):
    assert service.grade("server", "start").returncode == 0
    for path, code in ((SOLUTION, 0), (MISTAKE, 1)):
        here = service.grade("ex05", "--file", path, "--seed", "3", "--no-server")
        there = relayed(service, "ex05", "--file", path, "--seed", "3")
        assert (there.returncode, there.stderr) == (code, "") and there.returncode == here.returncode
        assert there.stdout.split("Score:")[0] == here.stdout.split("Score:")[0]
    as_json = json.loads(relayed(service, "ex05", "--file", MISTAKE, "--seed", "3", "--json").stdout)
    assert comparable(as_json) == comparable(json.loads(service.grade("ex05", "--file", MISTAKE, "--seed", "3",
                                                                      "--json", "--no-server").stdout))
    report = tmp_path / "report.html"  # a relative path, from the client's folder, written with its umask
    proc = relayed(service, "ex05", "--file", SOLUTION, "--report", "report.html", cwd=tmp_path)
    assert proc.returncode == 0 and report.is_file(), proc.stderr
    missing = relayed(service, "ex05", "--file", tmp_path / "nope.py")
    assert missing.returncode == 2 and len(missing.stderr.strip().splitlines()) == 1
    assert service.status()["graded"] == 4  # each relayed grading asked the service, as a client does


def test_other_commands_and_no_server_are_not_relayed(service):
    assert service.grade("server", "start").returncode == 0
    from grader.cli import entry as relay

    assert relay.run(["grade", "list"]) is None and relay.run(["grade", "ex05", "--no-server"]) is None
    assert relayed(service, "list").returncode != 0  # declined: this client could not run it itself
    assert relayed(service, "--lang", "zh", "check", "ex05", "--file", SOLUTION).returncode == 0


def test_the_front_answers_only_its_own_uid(service):
    if os.geteuid() != 0:
        pytest.skip("running a client as another uid needs root")
    assert service.grade("server", "start").returncode == 0
    service.status()
    front = client.front_path(service.folder)
    service.folder.chmod(0o711)
    front.chmod(0o777)

    def front_refuses_the_client():  # it closes the connection unanswered (sending may fail already)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(str(front))
        try:
            sock.sendall(json.dumps(address.signed({"op": "relay", "argv": ["grade", "ex05"]})).encode() + b"\n")
            return sock.recv(4096) == b""
        except (BrokenPipeError, ConnectionResetError):
            return True

    def client_refuses_the_front():
        try:
            client.connect(service.folder, front)
        except address.ServiceError:
            return True
        return False

    try:
        assert as_nobody(front_refuses_the_client) == 0
        assert as_nobody(client_refuses_the_front) == 0
    finally:
        service.folder.chmod(0o700)


def test_a_relayed_command_whose_fork_dies_is_an_error_never_a_success(service, tmp_path):
    slow = tmp_path / "slow.py"
    slow.write_text("import time\ntime.sleep(5)\n" + SOLUTION.read_text())
    assert service.grade("server", "start").returncode == 0
    front = service.status()["front"]
    proc = subprocess.Popen([sys.executable, "-m", "grader", "ex05", "--file", str(slow)], cwd=ROOT, env=service.env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, stdin=subprocess.DEVNULL)
    children = Path(f"/proc/{front}/task/{front}/children")
    wait_for(lambda: children.read_text().split(), "the front forked the command")
    os.kill(int(children.read_text().split()[0]), signal.SIGKILL)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 3 and "--no-server" in err and "Score" not in out, (out, err)
