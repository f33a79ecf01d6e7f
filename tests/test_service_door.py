"""The warm service is no door out of the sandbox, and never gives a wrong grade (issue 34).

The service's folder lies under the grading user's home here (XDG_RUNTIME_DIR unset, no TORCH_KATAS_SERVER_DIR:
what containers, cron and `su -` give), where a sandbox could have found it by name; each attack runs through the
real CLI with the service running, as root and as an ordinary user. The service's and the front's own defences
(the handshake, the namespaces, bounded framing, the variables a relayed command takes) are tested against
requests made by hand.
"""

import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import ROOT, grade_here, ordinary_user_or_skip, user_python, user_pythonpath
from grader.service import address, client

pytestmark = pytest.mark.slow

SOLUTION = ROOT / "solutions" / "ex05_manual_backward.py"
ATTACK = ROOT / "tests" / "attacks" / "reach_the_service.py"


class Home:
    """A grading user with a home folder of their own, whose `grade` keeps its service under it."""

    def __init__(self, user: str | None, base: Path):
        self.user = user
        self.home = base / "home"
        self.home.mkdir()
        if user:
            shutil.chown(self.home, user, user)
        self.folder = self.home / ".cache" / "torch-katas" / "run"
        self.env = {"PATH": os.environ["PATH"], "HOME": str(self.home), "LANG": "C.UTF-8",
                    "PYTHONPATH": os.pathsep.join([*user_pythonpath(), str(ROOT)])}

    def grade(self, *args, cwd=ROOT) -> subprocess.CompletedProcess:
        """`grade ARGS` as this user: `python -m grader`, relayed to the front once the service runs."""
        as_user = ["runuser", "-u", self.user, "--"] if self.user else []
        python = user_python() if self.user else sys.executable
        command = [*as_user, "env", "-i", *(f"{k}={v}" for k, v in self.env.items()), python, "-m", "grader",
                   *map(str, args)]
        return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=600,
                              stdin=subprocess.DEVNULL)

    def status(self) -> dict:
        return json.loads(self.grade("server", "status", "--json").stdout)


@pytest.fixture(params=["root", "ordinary user"])
def home(request):
    if os.geteuid() != 0:
        pytest.skip("these tests switch users and need root")
    user = None if request.param == "root" else ordinary_user_or_skip()
    base = Path(tempfile.mkdtemp(prefix="torch-katas-home-"))
    base.chmod(0o755)
    grader = Home(user, base)
    yield grader
    grader.grade("server", "stop")
    shutil.rmtree(base, ignore_errors=True)


def attack_source(home: Home, info: dict) -> str:
    """The attack with a perfect guess: the service's sockets and secret by name, its and its front's pids."""
    sockets = [str(home.folder / address.file_name(kind)) for kind in (address.SOCKET, address.FRONT)]
    return ATTACK.read_text().replace("TARGETS = []", f"TARGETS = {sockets!r}") \
        .replace("PIDS = []", f"PIDS = {[info['pid'], info['front']]!r}") \
        .replace("SECRETS = []", f"SECRETS = {[str(home.folder / address.file_name(address.SECRET))]!r}")


def test_a_sandbox_reaches_nothing_of_the_service_single_or_in_a_batch(home):
    assert home.grade("server", "start").returncode == 0
    info = home.status()
    assert info and Path(info["socket"]).parent == home.folder
    work = home.home / "work"
    work.mkdir()
    attack = work / "ex05.py"
    attack.write_text(attack_source(home, info))
    (work / "honest.py").write_text(SOLUTION.read_text())
    if home.user:
        for path in (work, attack, work / "honest.py"):
            shutil.chown(path, home.user, home.user)
    proc = home.grade("ex05", "--file", attack, "--json", cwd=work)  # through the front, the service, a sandbox
    result = json.loads(proc.stdout)
    assert (result["status"], result["score"]) == ("graded", 10), result
    assert "reached: []" in result["output"], result["output"]
    assert home.status()["graded"] == 1
    subs = work / "subs"
    for student, source in (("mallory", attack), ("alice", work / "honest.py")):
        (subs / student).mkdir(parents=True)
        shutil.copy(source, subs / student / "ex05.py")
    if home.user:
        subprocess.run(["chown", "-R", f"{home.user}:{home.user}", str(work)], check=True)
    proc = home.grade("batch", subs, "-e", "ex05", "--out", work / "grades", "--workers", "2", cwd=work)
    assert proc.returncode == 0, proc.stderr
    results = {r["student"]: r for r in map(json.loads, (work / "grades" / "results.jsonl").read_text().splitlines())}
    assert results["alice"]["score"] == results["mallory"]["score"] == 10
    assert "reached: []" in results["mallory"]["output"]
    assert not list(Path("/tmp").glob("reached-from-the-sandbox*"))
    assert home.status()["pid"] == info["pid"]  # the service lives on, untouched


def test_gradients_out_of_sight_earn_nothing_through_the_service(home):
    """ex05's out-of-sight routes (tests/attacks/out_of_sight.py) graded through the warm service, alone and in a
    batch, as root and as an ordinary user: each earns what predict and mse_loss earn, as without the service."""
    assert home.grade("server", "start").returncode == 0
    work = home.home / "work"
    subs = work / "subs"
    routes = ["thread at import", "process at import", "start_new_thread", "profile hook off", "aten backward"]
    attack = (ROOT / "tests" / "attacks" / "out_of_sight.py").read_text()
    for k, route in enumerate(routes):
        (subs / f"s{k}").mkdir(parents=True)
        (subs / f"s{k}" / "ex05.py").write_text(attack.replace('ROUTE = "make_fx"', f"ROUTE = {route!r}"))
    if home.user:
        subprocess.run(["chown", "-R", f"{home.user}:{home.user}", str(work)], check=True)
    info = home.status()
    single = json.loads(home.grade("ex05", "--file", subs / "s0" / "ex05.py", "--json", cwd=work).stdout)
    assert (single["status"], single["score"]) == ("graded", 3), single
    proc = home.grade("batch", subs, "-e", "ex05", "--out", work / "grades", "--workers", "2", cwd=work)
    assert proc.returncode == 0, proc.stderr
    results = [json.loads(line) for line in (work / "grades" / "results.jsonl").read_text().splitlines()]
    assert sorted(r["score"] for r in results) == [3] * len(routes), results
    after = next(filter(None, (home.status() for _ in range(5))), None)  # (a status asked as a grading ends: none)
    assert after and after["pid"] == info["pid"] and after["graded"] >= 1, (info, after)  # graded by the service


# -- the service's and the front's own defences ----------------------------------------------------------

def raw(path: Path, payload: bytes, linger: bool = False) -> bytes:
    """Send `payload` on a fresh connection to `path`; what came back before the server closed."""
    with socket.socket(socket.AF_UNIX) as sock:
        sock.settimeout(30)
        sock.connect(str(path))
        try:
            sock.sendall(payload)
            if linger:
                return b""
            sock.shutdown(socket.SHUT_WR)
            data = b""
            while chunk := sock.recv(65536):
                data += chunk
            return data
        except OSError:
            return b""


def test_the_service_and_the_front_survive_any_bytes(service):
    """Malformed, deep, huge, slow, unproven and forged requests, two thousand of them: each closes its own
    connection; the service then grades as without it, and nothing ran (no command, no stop, no restart)."""
    assert service.grade("server", "start").returncode == 0
    before = service.status()
    rng = random.Random(0)
    sockets = [client.socket_path(service.folder), client.front_path(service.folder)]
    hello = b'{"hello": "n"}\n'
    forged = {"op": "stop", "proof": "0" * 64, **address.signed({})}
    payloads = [b"[" * 200_000 + b"\n", b"{" * 50_000, b"x" * (2 << 20), b"\xff\xfe\n" * 1000, b"\n" * 10_000,
                b'{"op": "stop"}\n', json.dumps(address.signed({"op": "stop"})).encode() + b"\n",
                hello + b"[" * 200_000 + b"\n", hello + json.dumps(forged).encode() + b"\n",
                hello + json.dumps({**forged, "op": "relay", "argv": ["grade", "ex05"]}).encode() + b"\n",
                b'{"hello": ' + b'"a"' * 100_000 + b"}\n", b'{"hello": 5}\n', b"null\n", b'"str"\n']
    payloads += [bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300))) for _ in range(1000)]
    for n, payload in enumerate(payloads * 2):
        answer = raw(sockets[n % 2], payload)
        assert b'"stopped"' not in answer and b'"pid"' not in answer and b'"exit"' not in answer, payload[:80]
    slow = [socket.socket(socket.AF_UNIX) for _ in range(10)]  # they never finish their hello
    for sock in slow:
        sock.connect(str(sockets[0]))
        sock.sendall(b'{"hel')
    after = service.status()
    assert after["pid"] == before["pid"] and after["front"] == before["front"]
    served = service.grade("ex05", "--file", SOLUTION, "--json", "--seed", "5")
    here = service.grade("ex05", "--file", SOLUTION, "--json", "--seed", "5", "--no-server")
    assert json.loads(served.stdout)["checks"] == json.loads(here.stdout)["checks"]
    assert service.status()["graded"] == 1
    for sock in slow:
        sock.close()


def test_a_socket_put_in_place_of_the_services_is_refused_and_the_grading_done_here(service):
    """A rogue server in place of the service's and the front's sockets, answering whatever a client hopes
    for: it cannot prove the secret, so the client grades in its own process, saying so in one line."""
    assert service.grade("server", "start").returncode == 0
    service.status()
    rogue = []
    for path in (client.socket_path(service.folder), client.front_path(service.folder)):
        temporary = path.with_name("rogue")
        sock = socket.socket(socket.AF_UNIX)
        sock.bind(str(temporary))
        sock.listen(8)
        os.replace(temporary, path)
        rogue.append(sock)
    script = ("import socket, sys, select\n"
              f"socks = [socket.socket(fileno={rogue[0].fileno()}), socket.socket(fileno={rogue[1].fileno()})]\n"
              "while True:\n"
              "    for s in select.select(socks, [], [])[0]:\n"
              "        c, _ = s.accept(); c.recv(65536)\n"
              "        c.sendall(b'{\"proof\": \"00\", \"nonce\": \"1\"}\\n{\"result\": {\"score\": 10}}\\n"
              "{\"pid\": 1}\\n{\"exit\": 0}\\n'); c.close()\n")
    server = subprocess.Popen([sys.executable, "-c", script], pass_fds=[s.fileno() for s in rogue])
    try:
        proc = service.grade("ex05", "--json")  # the untouched stub: a forged answer would say 10
        assert json.loads(proc.stdout)["score"] < 10
        notes = [line for line in proc.stderr.splitlines() if "could not prove" in line]
        assert len(notes) == 1, proc.stderr
    finally:
        server.kill()
        server.wait()
        for sock in rogue:
            sock.close()
    client.socket_path(service.folder).unlink()
    client.front_path(service.folder).unlink()


def test_a_peer_in_other_namespaces_is_refused_even_with_the_secret(service):
    """A process of our uid that read the secret (where no layer stopped it) but runs in a user, PID and network
    namespace of its own, as a sandbox does: the service and the front close its connection unanswered."""
    if not shutil.which("unshare"):
        pytest.skip("no unshare(1) here")
    assert service.grade("server", "start").returncode == 0
    service.status()
    probe = (
        "import sys, socket\n"
        "from grader import framing\n"
        "from grader.service import address\n"
        "folder, path = sys.argv[1], sys.argv[2]\n"
        "sock = socket.socket(socket.AF_UNIX); sock.connect(path)\n"
        "try:\n"
        "    conn, proof = address.handshake(sock, folder)\n"
        "    conn.send(address.signed({'op': 'status', **proof}))\n"
        "    print('answered', conn.receive()[0])\n"
        "except Exception as exc:\n"
        "    print('refused', type(exc).__name__)\n")
    for path in (client.socket_path(service.folder), client.front_path(service.folder)):
        proc = subprocess.run(["unshare", "--user", "--map-root-user", "--pid", "--net", "--fork", sys.executable,
                               "-c", probe, str(service.folder), str(path)], capture_output=True, text=True,
                              timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert proc.stdout.startswith("refused"), (proc.stdout, proc.stderr)
    assert service.status()["graded"] == 0


def relay_by_hand(service, argv: list[str], env: dict, cwd: Path) -> dict:
    """A relay request made as entry.py makes it, but with `env` as it is (the client-side filter skipped)."""
    folder = str(service.folder)
    sock = address.connect(str(client.front_path(service.folder)))
    conn, proof = address.handshake(sock, folder)
    sink = os.open(os.devnull, os.O_RDWR)
    try:
        conn.send(address.signed({"op": "relay", "argv": argv, "cwd": str(cwd), "env": env, "umask": 0o022,
                                  "stdout": ["utf-8", "strict"], **proof}), fds=[sink, sink, sink])
        first, _ = conn.receive()
        return conn.receive()[0] if "pid" in first else first
    finally:
        os.close(sink)
        sock.close()


def test_a_relayed_command_takes_only_the_variables_a_command_reads_and_starts_no_service(service, tmp_path):
    assert service.grade("server", "start").returncode == 0
    service.status()
    elsewhere = tmp_path / "elsewhere"
    poisoned = {"TORCH_KATAS_SERVER_DIR": str(elsewhere), "PYTHONWARNINGS": "error::::0", "PYTHONPATH": "/evil",
                "BROWSER": f"touch {tmp_path / 'browsed'}", "LD_PRELOAD": "/nonexistent.so", "PATH": "/evil",
                "TORCH_KATAS_SERVER_IDLE": "1"}
    answer = relay_by_hand(service, ["grade", "ex05", "--file", str(SOLUTION), "--report", "r.html"], poisoned,
                           tmp_path)
    assert answer == {"exit": 0} and (tmp_path / "r.html").is_file()
    assert not elsewhere.exists() and not (tmp_path / "browsed").exists()
    assert service.status()["idle_stop_s"] == client.IDLE_DEFAULT


def test_a_fork_of_the_front_whose_service_is_gone_grades_itself_and_starts_none(service, monkeypatch):
    """In a fork of the front (client.START off), a grading whose service went away is done in that process:
    never by a service the fork would start with whatever environment it was given."""
    from grader.course.exercises import builtin_course

    monkeypatch.setattr(client, "START", False)
    ex05 = builtin_course().find("ex05")
    assert client.served(ex05, SOLUTION, {"lang": "en"}) is None  # no service: none is started
    assert service.left() == []


def test_a_slow_connection_to_the_front_holds_up_no_command(service):
    assert service.grade("server", "start").returncode == 0
    holders = [socket.socket(socket.AF_UNIX) for _ in range(3)]
    for sock in holders:
        sock.connect(str(client.front_path(service.folder)))  # and never says hello
    proc = subprocess.run([sys.executable, "-c", "import sys; sys.modules['click'] = None; "
                           "from grader.cli.entry import main; main()", "ex05", "--file", str(SOLUTION)],
                          cwd=ROOT, env=service.env, capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 0 and "Score: 10/10" in proc.stdout, proc.stderr  # only a relayed command can
    for sock in holders:
        sock.close()


# -- never a wrong grade: whatever is warm is keyed by the file it came from --------------------------------

def course(root: Path, checks: str, points: float) -> Path:
    """A course with one exercise `hw1` whose checks are `checks`."""
    (root / "exercises" / "hw1").mkdir(parents=True)
    (root / "checks").mkdir()
    (root / "solutions").mkdir()
    (root / "course.toml").write_text('name = "c"\nexercises = ["hw1"]\n')
    (root / "exercises" / "hw1" / "exercise.toml").write_text(f'title = "Double"\npoints = {points}\n')
    (root / "exercises" / "hw1" / "README.md").write_text("# hw1\n")
    (root / "exercises" / "hw1" / "hw1.py").write_text("def double(x):\n    raise NotImplementedError\n")
    (root / "solutions" / "hw1.py").write_text("def double(x):\n    return 2 * x\n")
    (root / "checks" / "hw1.py").write_text(checks)
    return root


CHECKS_A = '''from grader.checking import check, fail


@check("doubles 3", points=1)
def test_three(submission):
    if submission.double(3) != 6:
        fail("double(3) should be 6")


@check("doubles -1", points=2, visibility="public")
def test_minus_one(submission):
    if submission.double(-1) != -2:
        fail("double(-1) should be -2")
'''
CHECKS_B = CHECKS_A.replace("points=2", "points=5").replace("doubles 3", "doubles 3 (B)")


def test_courses_releases_and_changed_checks_through_one_service_grade_as_without_it(service, tmp_path):
    a = course(tmp_path / "a", CHECKS_A, 3)
    b = course(tmp_path / "b", CHECKS_B, 6)
    assert grade_here("release", "--out", tmp_path / "release", cwd=a).returncode == 0
    release = tmp_path / "release"
    assert service.grade("server", "start").returncode == 0
    sequence = [(a, a / "solutions" / "hw1.py"), (release, a / "solutions" / "hw1.py"), (b, b / "solutions" / "hw1.py"),
                (a, a / "solutions" / "hw1.py"), (release, a / "exercises" / "hw1" / "hw1.py"),
                (b, a / "exercises" / "hw1" / "hw1.py"), (a, a / "solutions" / "hw1.py")]
    for where, path in sequence:
        served = service.grade("hw1", "--file", path, "--json", "--seed", "1", cwd=where)
        here = service.grade("hw1", "--file", path, "--json", "--seed", "1", "--no-server", cwd=where)
        s, h = json.loads(served.stdout), json.loads(here.stdout)
        assert (s["score"], s["max_score"], [c["id"] for c in s["checks"]]) == \
               (h["score"], h["max_score"], [c["id"] for c in h["checks"]]), (where, path, s, h)
        assert served.returncode == here.returncode
    before = service.status()
    assert before["graded"] == len(sequence)  # one service graded them all, each course's checks its own
    (a / "checks" / "hw1.py").write_text(CHECKS_A.replace("!= 6", "!= 7"))  # a check changed: the service sees it
    served = json.loads(service.grade("hw1", "--file", a / "solutions" / "hw1.py", "--json", cwd=a).stdout)
    assert served["score"] == 2  # the changed check fails the solution, as without the service
    after = service.status()  # graded by a fresh service (the old one restarts on a changed check)
    assert after["pid"] != before["pid"] and after["graded"] == 1
