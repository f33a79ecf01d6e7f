"""`grade doctor`: what isolates learner code on this machine, proved by a test sandbox.

A small self-test runs as learner code in a real sandbox, set up exactly as for grading, and tries what a
hostile submission would: read the reference solutions, see and signal the grading process, open its
descriptors, ptrace it, connect to a TCP port this process opens, reach a unix socket of the user's (one this
process listens on in the folder of the warm service's sockets, by its name, by listing the folder, and an
abstract one), write outside its work dir, read the grader's environment (and its block in memory), reach the
hidden checks and the grader's variables in memory, have the grader read a file through a link in its work dir,
run a program, draw on the terminal with escape sequences; and the grader parses a malformed notebook. What it
managed is reported beside the layers the sandbox applied.

Runs in: `grade doctor`'s process, a batch's and a cluster worker's grading process (the judge's side of a
test sandbox, driven through the submission proxy).
"""

from __future__ import annotations

import contextlib
import os
import platform
import secrets
import shutil
import socket
import sys
import tempfile
import time
import types
from collections.abc import Sequence
from pathlib import Path

from grader.sandbox import backend, isolation, zygote
from grader.course.exercises import CHECKS_DIR, current_course
from grader.sandbox.problems import LearnerProblem
from grader.sandbox.limits import Limits
from grader.judge.submission import Submission
from grader.sandbox.source import Source, SubmissionError, load_source
from grader.text import Text, quoted, verbatim, visible

SELF_TEST = '''
import ctypes, os, socket, subprocess, sys

def attempts(solution, grader_pid, port, secret, outside, linked, sockets, folders, abstract):
    done = {}
    def attempt(name, action):
        try:
            action()
            done[name] = True
        except Exception:
            done[name] = False
    attempt("read the reference solutions", lambda: open(solution).read(1))
    done["see other processes"] = any(p.isdigit() and int(p) != os.getpid() for p in os.listdir("/proc"))
    attempt("signal the grading process", lambda: os.kill(grader_pid, 0))
    attempt("open the grading process's descriptors", lambda: os.listdir(f"/proc/{grader_pid}/fd"))
    libc = ctypes.CDLL(None, use_errno=True)
    def ptrace():
        if libc.ptrace(0x4206, grader_pid, None, None) != 0:  # PTRACE_SEIZE: attaches without stopping
            raise OSError(ctypes.get_errno(), "ptrace")
        libc.ptrace(17, grader_pid, None, None)  # PTRACE_DETACH
    attempt("ptrace the grading process", ptrace)
    attempt("connect to a TCP port on 127.0.0.1", lambda: socket.create_connection(("127.0.0.1", port), 2).close())
    def dial(path):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(2)
        s.connect(path)
        s.close()
    def dial_all(paths):
        for path in paths:
            try:
                dial(path)
                return
            except OSError:
                pass
        raise OSError("none answered")
    def listed():
        found = [os.path.join(f, n) for f in folders if os.path.isdir(f) for n in os.listdir(f)]
        dial_all([p for p in found if p.endswith(".sock")])
    attempt("connect to a unix socket of the user's, by its name", lambda: dial_all(sockets))
    attempt("find the user's sockets by listing their folders", listed)
    attempt("connect to an abstract unix socket of the grader's", lambda: dial("\\0" + abstract))
    def pair_then_dial():
        a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        a.connect(sockets[0])
    attempt("dial a socket through a socket pair of its own", pair_then_dial)
    print("\\x1b]0;pwned\\x07\\x1b[2J\\x1b[1;1HScore: 10/10")
    attempt("write outside its work dir", lambda: open(outside, "w").write("x"))
    done["read the grader's environment"] = secret in os.environ
    attempt("run a program", lambda: subprocess.run(["true"], check=True))
    with open("/proc/self/stat", "rb") as f:
        fields = f.read().rsplit(b")", 1)[1].split()
    start, end = int(fields[47]), int(fields[48])
    done["read the grader's environment block in memory"] = ctypes.string_at(start, end - start).strip(b"\\0") != b""
    done["reach the hidden checks in memory"] = any(getattr(m, "REFERENCE", None) == secret
                                                   for m in list(sys.modules.values()))
    frame, seen = sys._getframe(), False
    while frame is not None:
        outer = frame.f_code.co_filename != "self_test.py"
        seen = seen or outer and secret in [v for v in frame.f_locals.values() if isinstance(v, str)]
        frame = frame.f_back
    done["read the grader's variables (the frames it was forked in)"] = seen
    for name in os.listdir("."):
        os.unlink(name)
    os.symlink(linked, ".output")  # a judge that reads its output by name would read the link's target
    return done
'''

LAYERS = {
    "namespaces": Text("other processes invisible, no network, private /tmp, /run and /dev/shm, solutions and checks "
                       "masked", "看不到其他进程，没有网络，/tmp、/run 和 /dev/shm 是私有的，参考答案和检查被遮蔽"),
    "landlock": Text("files: read-only Python and libraries, writes only in the work dir, nothing run; TCP refused; "
                     "signals, ptrace and abstract sockets kept inside the sandbox",
                     "文件：Python 和库只读，只能在工作目录中写入，不能运行程序；TCP 被拒绝；"
                     "信号、ptrace 和抽象套接字都限制在沙箱内"),
    "dedicated uid": Text("learner code runs as a uid that owns nothing", "学生代码以一个什么也不拥有的 uid 运行"),
    "seccomp": Text("no new socket (its one channel is inherited); ptrace, process_vm_*, pidfd_getfd, mount, bpf, "
                    "kexec, io_uring and new namespaces refused",
                    "不能新建套接字（唯一的通道是继承来的）；ptrace、process_vm_*、pidfd_getfd、mount、bpf、kexec、"
                    "io_uring 和新的命名空间都被拒绝"),
    "memory cgroup": Text("one memory budget: its processes, their children and the files it writes together",
                          "同一份内存预算：进程、子进程和它写的文件合计"),
    "process limit": Text("fewer processes and threads at once than the limit: a fork bomb stops there",
                          "同时存在的进程和线程少于上限：fork 炸弹到此为止"),
    "non-dumpable grader": Text("same-uid processes cannot open the grader's /proc/<pid>/fd or mem",
                                "同 uid 的进程打不开评分程序的 /proc/<pid>/fd 或 mem"),
}

PORTABLE_LAYERS = {
    "spawned process": Text("learner code in a fresh process of its own (spawn, never fork): nothing of the judge's "
                            "memory, the learner's environment only, its time kept by the judge",
                            "学生代码在一个全新的独立进程中运行（spawn，从不 fork）：没有评判进程的内存，"
                            "只有学生的环境变量，时间由评判进程限制"),
    "rlimits": Text("address space, CPU time and file size bounded", "地址空间、CPU 时间和文件大小受限"),
    "seatbelt": Text("macOS Seatbelt: no network, no other program, writes only in the work dir, the solutions, "
                     "checks and home folder unreadable",
                     "macOS Seatbelt：没有网络，不能运行其他程序，只能在工作目录中写入，参考答案、检查和主目录不可读"),
    "job object": Text("Windows Job object: its processes together within the memory limit, ended with it",
                       "Windows Job 对象：它的所有进程合计不超过内存上限，并随它一起结束"),
}
PORTABLE_ABSENT = {
    "rlimits": Text("this platform has no resource limits", "这个平台没有资源限制"),
    "seatbelt": Text("only on macOS (sandbox-exec): here nothing keeps learner code from what its user can read, "
                     "nor from the network", "只在 macOS 上有（sandbox-exec）：这里没有什么能阻止学生代码读取用户能读的"
                     "文件，也不能阻止它访问网络"),
    "job object": Text("only on Windows", "只在 Windows 上有"),
}

# What the self-test tries (its names are the keys of the report's "managed"), in Chinese.
ATTEMPTS_ZH = {
    "read the reference solutions": "读取参考答案",
    "see other processes": "看到其他进程",
    "signal the grading process": "向评分进程发信号",
    "open the grading process's descriptors": "打开评分进程的文件描述符",
    "ptrace the grading process": "ptrace 评分进程",
    "connect to a TCP port on 127.0.0.1": "连接 127.0.0.1 上的 TCP 端口",
    "write outside its work dir": "在工作目录之外写入",
    "read the grader's environment": "读取评分程序的环境变量",
    "run a program": "运行一个程序",
    "read the grader's environment block in memory": "读取内存中评分程序的环境变量块",
    "reach the hidden checks in memory": "触及内存中的隐藏检查",
    "read the grader's variables (the frames it was forked in)": "读取评分程序的变量（fork 出它的那些栈帧）",
    "have the grader read a file through a link in its work dir": "让评分程序通过工作目录中的链接读取文件",
    "crash the grader with a malformed notebook": "用格式错误的 notebook 让评分程序崩溃",
    "connect to a unix socket of the user's, by its name": "按名字连接用户的 unix 套接字",
    "find the user's sockets by listing their folders": "列出用户的文件夹来寻找套接字",
    "connect to an abstract unix socket of the grader's": "连接评分程序的抽象 unix 套接字",
    "dial a socket through a socket pair of its own": "用自己建的套接字对去连接别的套接字",
    "draw on the terminal with escape sequences": "用转义序列在终端上作画",
}


def attempt(name: str) -> Text:
    """An attempt of the self-test by its name, in each language (one this grader does not know: quoted)."""
    return Text(name, ATTEMPTS_ZH[name]) if name in ATTEMPTS_ZH else Text("{name}", name=quoted(name))


def _hidden_checks(secret: str) -> str:
    """A stand-in for a check module the grader imported (in the checks folder, holding a reference value)."""
    module = types.ModuleType("grader.checks._doctor_reference")
    module.__file__ = str(CHECKS_DIR / "_doctor_reference.py")
    module.REFERENCE = secret  # type: ignore[attr-defined]
    sys.modules[module.__name__] = module
    return module.__name__


def _malformed_notebook_raises(folder: Path) -> bool:
    """Whether reading a notebook nested 100 000 deep (or with a cell source that is a number) escapes as
    anything but the submission's own error."""
    for name, text in (("deep.ipynb", "[" * 100_000 + "]" * 100_000),
                       ("number.ipynb", '{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, '
                                        '"cells": [{"cell_type": "code", "source": 5, "metadata": {}}]}')):
        (folder / name).write_text(text)
        try:
            load_source(folder / name)
        except SubmissionError:
            pass
        except BaseException:
            return True
    return False


def _listening(folders: Sequence[str]) -> tuple[list[socket.socket], list[str]]:
    """Unix sockets this process listens on, as the warm service does: one in the first of `folders` that is ours
    (made 0700 if need be), and an abstract one; the sockets and (their path, the abstract name)."""
    listeners, paths = [], []
    for folder in folders:
        try:
            os.makedirs(folder, mode=0o700, exist_ok=True)
            if os.stat(folder).st_uid != os.getuid():
                continue
            path = os.path.join(folder, f"doctor-{secrets.token_hex(4)}.sock")
            listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            listener.bind(path)
            listener.listen(1)
        except OSError:
            continue
        listeners.append(listener)
        paths.append(path)
        break
    if not sys.platform.startswith("linux"):  # abstract sockets are Linux's
        return listeners, [*paths, ""]
    abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    name = f"torch-katas-doctor-{secrets.token_hex(4)}"
    abstract.bind("\0" + name)
    abstract.listen(1)
    return [*listeners, abstract], [*paths, name]


def run_self_test(folders: Sequence[str] = ()) -> dict:
    """Start a sandbox as grading does, run the self-test in it; return what was applied and what it managed.
    `folders`: where the user's processes keep their sockets (the warm service's folder): the self-test dials one
    this process listens on there, by its name and by listing them."""
    if not backend.portable():
        isolation.protect_self()
    listeners, (*sockets, abstract) = _listening(folders) if hasattr(socket, "AF_UNIX") else ([], [""])
    secret = f"TORCH_KATAS_DOCTOR_{secrets.token_hex(4)}"
    os.environ[secret] = "1"
    solutions = current_course().solutions_dir
    solution = next(iter(sorted(solutions.glob("*.py"))), None) if solutions.is_dir() else None
    outside_dir = Path(tempfile.mkdtemp(prefix="torch-katas-doctor-"))
    outside_dir.chmod(0o777)
    linked = outside_dir / "grader-only.txt"
    linked.write_text(secret)
    linked.chmod(0o600)
    checks = _hidden_checks(secret)
    server = socket.create_server(("127.0.0.1", 0))
    limits = Limits(time=20, hidden=tuple(str(p) for p in [solutions, CHECKS_DIR] if p.is_dir()))
    submission = Submission(Source(chunks=[("self_test.py", SELF_TEST)], filename="self_test.py",
                                   path=Path("self_test.py")), limits)
    spawner = zygote.connect()  # the test sandbox starts as a grading's does: from the zygote, where there is one
    zygote.use(zygote.Channel(spawner) if spawner else None)
    try:
        started = time.perf_counter()
        try:
            done = submission.call("attempts", str(solution or "/nonexistent"), os.getpid(),
                                   server.getsockname()[1], secret, str(outside_dir / "written"), str(linked),
                                   sockets or ["/nonexistent.sock"], list(folders), abstract)
        except LearnerProblem as problem:  # the test sandbox itself failed: say so, never pretend
            done = {f"finish the self-test ({problem.message})": True}
        elapsed = time.perf_counter() - started
        outside = "write outside its work dir"
        done[outside] = done.get(outside) or (outside_dir / "written").exists()
        if solution is None:
            done.pop("read the reference solutions", None)
        submission.close()
        printed = submission.output()
        done["have the grader read a file through a link in its work dir"] = secret in printed
        done["draw on the terminal with escape sequences"] = "\x1b" in visible(printed)
        done["crash the grader with a malformed notebook"] = _malformed_notebook_raises(outside_dir)
    finally:
        submission.close()
        zygote.use(None)
        if spawner is not None:
            spawner.close()
        server.close()
        for listener in listeners:
            listener.close()
        for path in sockets:
            with contextlib.suppress(OSError):
                os.unlink(path)
        shutil.rmtree(outside_dir, ignore_errors=True)
        del os.environ[secret]
        sys.modules.pop(checks, None)
    return {"backend": backend.name(), "applied": submission.isolation.get("applied", []),
            "missing": submission.isolation.get("missing", {}), "managed": done, "setup_s": elapsed}


def summary_line(report: dict, lang: str = "en") -> str:
    """One line for batch and the Gradescope runner, in `lang` (the layers' names are code: `landlock`...)."""
    def code(names) -> str:
        return ", ".join(f"`{name}`" for name in names)

    line = Text("Isolation of student code: {applied}", "学生代码的隔离：{applied}",
                applied=code(report["applied"]) if report["applied"] else Text("none", "无")).render(lang)
    if report["missing"]:
        line += Text("; missing: {names}", "；缺少：{names}", names=code(report["missing"])).render(lang)
    managed = [name for name, ok in report["managed"].items() if ok]
    if managed:
        line += Text("; WARNING, student code could still: {names}", "；警告：学生代码仍然可以：{names}",
                     names=", ".join(attempt(name).render(lang) for name in managed)).render(lang)
    elif not report["applied"]:
        line += Text(" (plain processes only)", "（只是普通进程）").render(lang)
    return line + Text(" (`grade doctor` for details)", "（详见 `grade doctor`）").render(lang)


def why_missing(layer: str, reported: str | None) -> Text:
    """Why a layer is missing: in the doctor's own words where it sees the cause itself (a folder other users
    cannot read, a kernel without Landlock), else the sandbox's report quoted as it is."""
    if layer == "dedicated uid" and os.geteuid() == 0:
        blocked = isolation.readable_by_others(isolation.python_paths())
        if blocked is not None:
            return Text("{path} is not readable by other users, so root keeps its uid with every capability dropped",
                        "其他用户读不了 {path}，所以 root 保留自己的 uid，但丢弃所有 capability",
                        path=verbatim(blocked))
    if layer == "landlock" and not isolation.landlock_abi():
        return Text("the kernel offers no Landlock (Linux 5.13+ with it enabled)",
                    "内核不提供 Landlock（需要 Linux 5.13+ 并已启用）")
    if reported:
        return Text("{why}", why=quoted(reported))
    return Text("not applied", "未应用")


def _portable_layers(report: dict, lang: str) -> list[str]:
    """The portable backend's layers, each present or absent, and why."""
    lines = []
    limits_missing = {k: v for k, v in report["missing"].items() if k.startswith("RLIMIT") or k == "rlimits"}
    for layer, covers in PORTABLE_LAYERS.items():
        present = not limits_missing if layer == "rlimits" else any(a.startswith(layer) for a in report["applied"])
        if present:
            lines.append(f"  {Text('yes', '是 ').render(lang)} {layer}: {covers.render(lang)}")
            continue
        why = (Text("{why}", why=quoted("; ".join(f"{k}: {v}" for k, v in limits_missing.items())))
               if layer == "rlimits" and limits_missing else
               Text("{why}", why=quoted(report["missing"][layer])) if layer in report["missing"] else
               PORTABLE_ABSENT[layer])
        lines.append(f"  {Text('no ', '否 ').render(lang)} {layer}: {why.render(lang)}")
    return lines


def render(report: dict, lang: str = "en") -> str:
    import torch

    def say(en: str, zh: str, **values) -> str:
        return Text(en, zh, **values).render(lang)

    user = "root" if hasattr(os, "geteuid") and os.geteuid() == 0 else \
        f"uid {os.geteuid()}" if hasattr(os, "geteuid") else os.environ.get("USERNAME", "?")
    cuda = say("CUDA available", "CUDA 可用") if torch.cuda.is_available() else say("no CUDA device", "没有 CUDA 设备")
    name = report.get("backend", backend.LINUX)
    lines = [f"Python {platform.python_version()} ({sys.executable}) · torch {torch.__version__} · {cuda}",
             say("{system} {release}, running as {user}", "{system} {release}，以 {user} 身份运行",
                 system=platform.system(), release=platform.release(), user=user),
             say("Isolation backend: {name} ({why})", "隔离后端：{name}（{why}）", name=name,
                 why=say("chosen by {env}", "由 {env} 选择", env=f"{backend.ENV}={name}")
                 if os.environ.get(backend.ENV) else say("this platform's default", "这个平台的默认")), "",
             say("Layers isolating learner code here:", "这里隔离学生代码的各层：")]
    if name == backend.PORTABLE:
        lines += _portable_layers(report, lang)
    for layer, covers in LAYERS.items() if name == backend.LINUX else ():
        applied = next((a for a in report["applied"] if a.startswith(layer)), None)
        if layer == "non-dumpable grader":
            applied = layer
        if applied:
            lines.append(f"  {say('yes', '是 ')} {applied}: {covers.render(lang)}")
        elif layer == "dedicated uid" and os.geteuid() != 0:
            lines.append(f"  {say('no ', '否 ')} {layer}: " + say(
                "not needed: the grader runs as an ordinary user, whose uid the sandbox keeps without capabilities",
                "不需要：评分程序以普通用户运行，沙箱保留它的 uid，但不带任何 capability"))
        else:
            why = why_missing(layer, report["missing"].get(layer))
            lines.append(f"  {say('no ', '否 ')} {layer}: {why.render(lang)}")
    if "capabilities" in report["missing"]:
        lines.append(f"  {say('no ', '否 ')} " + say("dropping capabilities: {why}", "丢弃 capability：{why}",
                                                     why=quoted(report["missing"]["capabilities"])))
    lines += ["", say("A test sandbox, set up as for grading, just tried to:",
                      "一个按评分时的方式搭建的测试沙箱刚刚尝试：")]
    for name, managed in report["managed"].items():
        mark = say("COULD   ", "做到了  ") if managed else say("refused ", "被拒绝  ")
        lines.append(f"  {mark} {attempt(name).render(lang)}")
    lines.append("")
    if any(report["managed"].values()):
        lines.append(say("Learner code is NOT fully isolated here: grade untrusted code in a container or VM.",
                         "这里的学生代码没有被完全隔离：请在容器或虚拟机中为不可信的代码评分。"))
    else:
        lines.append(say("Every attempt was refused.", "每一次尝试都被拒绝了。"))
    lines.append(say("Starting the sandbox and running the self-test took {ms} ms. What still needs a container or VM: "
                     "kernel exploits and side channels (see docs/security.md).",
                     "启动沙箱并运行自检用了 {ms} 毫秒。仍然需要容器或虚拟机来防范的：内核漏洞利用和侧信道"
                     "（见 docs/security.md）。", ms=f"{report['setup_s'] * 1000:.0f}"))
    return "\n".join(lines)
