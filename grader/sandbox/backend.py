"""Which isolation backend grades here: `linux` (isolation.py's kernel layers, the zygote, forked judges and the warm
service) or `portable` (portable.py: spawned processes and what the platform offers, no service). The portable one
is chosen on every platform but Linux, and on Linux with TORCH_KATAS_ISOLATION=portable; TORCH_KATAS_ISOLATION=linux
(or unset) keeps the Linux one on Linux.

Runs in: every process that grades or says how it grades (the `grade` client, a warm parent, a judge, doctor).
Trusted. Imports nothing Linux-only; `file_walls` starts a short child on Linux to see whether the kernel lets it
make a user namespace.
"""

from __future__ import annotations

import os
import shutil
import sys

ENV = "TORCH_KATAS_ISOLATION"
LINUX, PORTABLE = "linux", "portable"


def name() -> str:
    """The backend grading here: `portable` off Linux or when TORCH_KATAS_ISOLATION says so, else `linux`."""
    if not sys.platform.startswith("linux"):
        return PORTABLE
    return PORTABLE if os.environ.get(ENV, "").strip().lower() == PORTABLE else LINUX


def portable() -> bool:
    return name() == PORTABLE


def seatbelt_present() -> bool:
    """macOS's Seatbelt, which `sandbox-exec` drives (portable.py applies a profile of it by its library call)."""
    return sys.platform == "darwin" and shutil.which("sandbox-exec", path="/usr/bin") is not None


def file_walls() -> list[str]:
    """The layers here that keep learner code from the files its user can read (a teacher's solutions, the other
    students' submissions): on Linux, namespaces (mounts masking them) and Landlock (an allow-list); on the portable
    backend, Seatbelt on macOS. Empty where nothing does: a batch then refuses to grade unless told
    (`grade batch --isolation none`)."""
    if portable():
        return ["seatbelt"] if seatbelt_present() else []
    from grader.sandbox import isolation

    walls = ["landlock"] if isolation.landlock_abi() else []
    return (["namespaces"] if _user_namespaces() else []) + walls


def _user_namespaces() -> bool:
    """Whether this process may make a user namespace (a container's default seccomp profile refuses it): tried in
    a child, which exits at once."""
    from grader.sandbox import isolation

    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        try:
            isolation.unshare_all()
            os._exit(0)
        except BaseException:
            os._exit(1)
    return os.waitpid(pid, 0)[1] == 0
