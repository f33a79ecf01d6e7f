"""The `grade` command's entry: `grade EXERCISE ...` run by the warm service's front, on the learner's own
terminal, or else here.

Of a warm `grade ex05`, the client's own start (Python, click and the grader's modules) was about half. As Rails'
Spring does, the client here only hands what the command needs to the service's front (front.py), a small process
the service starts beside itself with the CLI imported and no torch: its arguments, working folder, umask, the
variables a command reads (`passed`: the locale, the terminal, the course; nothing else of its environment) and
its stdin, stdout and stderr (SCM_RIGHTS), once the front has proved it holds the service's secret and this
client has proved it too (service/address.py). The front's fork runs the same command (cli/main.py) with them: it
asks the service to grade as any client does, writes straight to the learner's terminal, and sends the exit
status back. So a relayed `grade ex05` prints, writes and exits exactly as one run here.

Only a single grading is relayed (`main.relayable`, decided in the front's fork). Anything else (no service
running, --no-server, TORCH_KATAS_NO_SERVER or CI, another command, another version, a service that restarts
because the grader, torch or the course changed) and the command runs in this process as before, which starts the
service when there is none. This module, framing.py and address.py are all
the client imports, and it ends with os._exit once the front's fork has (it has nothing to tear down, and
Python's finalization took 17 ms).

Runs in: the `grade` process. Trusted: the learner's own command.
"""

from __future__ import annotations

import os
import signal
import sys

PASSED = ("LANG", "LANGUAGE", "TERM", "COLORTERM", "NO_COLOR", "FORCE_COLOR", "CLICOLOR", "CLICOLOR_FORCE", "COLUMNS",
          "LINES", "TZ", "TORCH_KATAS_COURSE", "TORCH_KATAS_NOW", "GRADER_DEBUG")  # what a relayed command reads
PASSED_PREFIXES = ("LC_",)  # the locale's categories


def passed(env) -> dict[str, str]:
    """The variables a relayed command may take from its client: the locale, the terminal's, colour, the course and
    the grader's documented options. Never PYTHON*, LD_*, BROWSER, PATH or the service's own settings."""
    return {k: v for k, v in env.items() if (k in PASSED or k.startswith(PASSED_PREFIXES)) and isinstance(v, str)}


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
    from grader import framing
    from grader.service import address

    if "--no-server" in argv or not address.wanted():
        return None
    try:
        folder = address.checked_folder(address.folder_path())
        sock = address.connect(os.path.join(folder, address.file_name(address.FRONT)))
        if sock is None:
            return None
        conn, proof = address.handshake(sock, folder)
    except address.Refused as exc:  # a socket in place of the front's that is not ours: here, and said
        from grader.text import lang_in, locale_lang, message_of, say

        print(say(lang_in(argv) or locale_lang(), "grade: {message}", message=message_of(exc)), file=sys.stderr)
        return None
    except (address.ServiceError, OSError):
        return None  # none yet, or not one we may use: the command here says why, and starts one
    umask = os.umask(0)
    os.umask(umask)
    with sock:
        try:
            sock.settimeout(None)
            conn.send(address.signed({
                "op": "relay", "argv": argv, "cwd": os.getcwd(), "env": passed(os.environ), "umask": umask,
                "stdout": [getattr(sys.stdout, "encoding", None) or "utf-8",
                           getattr(sys.stdout, "errors", None) or "strict"], **proof,
            }), fds=[0, 1, 2])
            first, _ = conn.receive()
            if "pid" not in first or not isinstance(first["pid"], int):
                return None  # declined: nothing was printed
            return _exit_status(conn, first["pid"])
        except (OSError, EOFError, framing.FrameError):  # a folder deleted under us, a front gone before it forked
            return None


def _exit_status(conn, pid: int) -> int | None:
    """Wait for the fork's exit status (None: run the command here, its service restarts); Ctrl-C here interrupts
    the command there, as it would here."""
    from grader import framing

    while True:
        try:
            answer, _ = conn.receive()
        except KeyboardInterrupt:
            try:
                os.kill(pid, signal.SIGINT)
            except ProcessLookupError:
                pass
            continue
        except (OSError, EOFError, framing.FrameError):
            answer = {}
        if answer.get("rerun") is True:
            return None
        if not isinstance(answer.get("exit"), int):  # the fork died: never silently a success
            from grader.learner.workspace import default_lang
            from grader.text import lang_in, say

            print(say(lang_in(sys.argv) or default_lang(), "grade: the grading service ended before the command "
                      "did; run it again with `--no-server`."), file=sys.stderr)
            return 3
        return answer["exit"]
