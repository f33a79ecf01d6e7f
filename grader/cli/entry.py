"""`grade EXERCISE ...` run by the warm service's front, on the learner's own terminal (the `grade` command's entry).

Of a warm `grade ex05`, the client's own start (Python, click and the grader's modules) was about half. As Rails'
Spring does, the client here only hands what the command needs to the service's front, a small process the service
starts beside itself with the CLI imported and no torch: its arguments, working folder, environment and umask, and
its stdin, stdout and stderr (SCM_RIGHTS). The front forks; the fork runs the same command (grader.cli.main) with them:
it asks the service to grade as any client does (client.py: the judge forks from the service's clean state,
learner code runs in the sandbox, never in the front), writes straight to the learner's terminal, and sends the
exit status back. So a relayed `grade ex05` prints, writes and exits exactly as one run here.

Only a single grading is relayed (`cli.relayable`, decided by the front before it forks). Anything else (no service
running, --no-server, TORCH_KATAS_NO_SERVER or CI, another command, another version) and the command runs in this
process as before, which starts the service when there is none. This module and address.py are all the client
imports, and it ends with os._exit once the front's fork has (it has nothing to tear down, and Python's finalization
took 17 ms). The front's socket lies beside the service's, in the same folder only its owner can enter, and both
ends check the other's uid.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys


def main() -> None:
    """The `grade` command: relayed to the service's front when one runs, else run here."""
    code = run(sys.argv)
    if code is None:
        from grader.cli.main import run as run_here

        run_here()
    else:  # nothing of ours to tear down: Python's own finalization took longer than the rest of this process
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def run(argv: list[str]) -> int | None:
    """The exit status of `argv` run by the front; None if it was not (then run it here)."""
    from grader.service import address

    if "--no-server" in argv or not address.wanted():
        return None
    try:
        folder = address.checked_folder(address.folder_path())
        sock = address.connect(os.path.join(folder, address.file_name(address.FRONT)))
    except (address.ServiceError, OSError):
        return None  # none yet, or not one we may use: the command here says why, and starts one
    if sock is None:
        return None
    umask = os.umask(0)
    os.umask(umask)
    with sock:
        try:
            request = address.signed({
                "op": "relay", "argv": argv, "cwd": os.getcwd(), "env": dict(os.environ), "umask": umask,
                "stdout": [getattr(sys.stdout, "encoding", None) or "utf-8",
                           getattr(sys.stdout, "errors", None) or "strict"],
            })
            socket.send_fds(sock, [json.dumps(request).encode() + b"\n"], [0, 1, 2])
            lines = sock.makefile("rb")
            first = _answer(lines)
            if first is None or "pid" not in first:
                return None  # declined: nothing was printed
            return _exit_status(lines, int(first["pid"]))
        except OSError:  # a folder deleted under us, a closed stdin, a front gone before it forked
            return None


def _answer(lines) -> dict | None:
    try:
        answer = json.loads(lines.readline())
    except ValueError:
        return None
    return answer if isinstance(answer, dict) else None


def _exit_status(lines, pid: int) -> int:
    """Wait for the fork's exit status; Ctrl-C here interrupts the command there, as it would here."""
    while True:
        try:
            answer = _answer(lines)
        except KeyboardInterrupt:
            try:
                os.kill(pid, signal.SIGINT)
            except ProcessLookupError:
                pass
            continue
        if answer is None or not isinstance(answer.get("exit"), int):  # the fork died: never silently a success
            from grader.cli.common import lang_in
            from grader.learner.workspace import default_lang
            from grader.text import say

            print(say(lang_in(sys.argv) or default_lang(), "grade: the grading service ended before the command "
                      "did; run it again with `--no-server`."), file=sys.stderr)
            return 3
        return answer["exit"]


# -- the front ------------------------------------------------------------------------------------------

