"""OS isolation of the sandbox on the Linux backend (backend.py): the kernel's own mechanisms, each detected at run
time, applied in the forked sandbox before any learner code runs (no exec, no container: the warm fork stays). The C
library is loaded on first use, so this module imports on any platform (portable.py is the other backend).

The layers, strongest first; each one the machine lacks is skipped and said (`grade doctor`):
- namespaces: new user, PID, network, mount and IPC namespaces. The sandbox sees no other process
  (its own /proc), has no network (a loopback of its own, down), its own /dev/shm, /tmp and /run, and
  the solutions, checks and submissions folders masked by empty mounts.
- landlock: a filesystem allow-list (read-only Python, site-packages and system libraries, read-write
  only the work dir, nothing executable), TCP bind and connect denied, signals and abstract unix sockets
  scoped to the sandbox; a Landlocked process cannot ptrace or open /proc/<pid>/mem of one outside.
- identity: as root, a dedicated unprivileged uid owns the sandbox and its work dir (where Python can
  be read by other users); otherwise root keeps its uid with every capability dropped. Always
  no_new_privs. The judge and the grading parent are made non-dumpable (`protect_self`), so a process
  of the same uid cannot open their /proc/<pid>/fd or mem.
- seccomp: a deny-list of the system calls learner code has no use for (ptrace, process_vm_*, pidfd_getfd,
  kexec, bpf, keyctl, mount, new namespaces, io_uring...), returning EPERM, and no new socket: `socket()` of any
  family is refused, `socketpair()` only makes a connected pair of unix sockets. The sandbox's only channel to
  anything is the one it inherits, so no path to a unix socket of the user's or the grader's can be dialled.
- process limit: the PID namespace's own pid_max (Linux 6.14+), so a fork bomb stops at a few hundred
  processes and threads, whatever the uid (RLIMIT_NPROC does not bind root).
Plain-process hygiene (its own session, closed descriptors, a minimal environment, rlimits) is
`grader.sandbox.process`'s and always on.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import platform
import re
import signal
import stat
import struct
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from grader.sandbox import cgroup



@functools.cache
def _libc() -> ctypes.CDLL:
    """The C library, loaded on first use (the Linux backend's own: this module imports on any platform)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc

# prctl(2)
PR_SET_PDEATHSIG, PR_SET_DUMPABLE, PR_SET_SECCOMP, PR_CAPBSET_DROP = 1, 4, 22, 24
PR_SET_NO_NEW_PRIVS, PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL = 38, 47, 4
# unshare(2), mount(2)
CLONE_NEWNS, CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = \
    0x00020000, 0x08000000, 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_BIND, MS_REC, MS_PRIVATE = 1, 2, 4, 8, 4096, 16384, 1 << 18
# Landlock (include/uapi/linux/landlock.h); the syscall numbers are the same on x86-64 and arm64
SYS_LANDLOCK_CREATE_RULESET, SYS_LANDLOCK_ADD_RULE, SYS_LANDLOCK_RESTRICT_SELF = 444, 445, 446
LANDLOCK_CREATE_RULESET_VERSION, LANDLOCK_RULE_PATH_BENEATH = 1, 1
FS_EXECUTE, FS_WRITE_FILE, FS_READ_FILE, FS_READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
FS_REMOVE_DIR, FS_REMOVE_FILE, FS_MAKE_CHAR, FS_MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
FS_MAKE_REG, FS_MAKE_SOCK, FS_MAKE_FIFO, FS_MAKE_BLOCK, FS_MAKE_SYM = 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12
FS_REFER, FS_TRUNCATE, FS_IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15  # ABI 2, 3, 5
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1  # ABI 4
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1  # ABI 6
# capabilities, seccomp
SYS_CAPSET = {"x86_64": 126, "aarch64": 91}
CAPABILITY_VERSION_3 = 0x20080522
SECCOMP_MODE_FILTER = 2

PROCESS_LIMIT = 512  # the sandbox namespace's pid_max: fewer processes and threads than this at once
DEDICATED_UID_BASE = 2_100_000_000  # + a slot: a uid no account uses, one per live sandbox


class LayerError(OSError):
    """A layer could not be applied here."""


def _check(result: int, what: str) -> int:
    if result < 0:
        err = ctypes.get_errno()
        raise LayerError(err, f"{what}: {os.strerror(err)}")
    return result


def prctl(option: int, arg2: int = 0, arg3: int = 0, arg4: int = 0, arg5: int = 0) -> int:
    return _check(_libc().prctl(option, ctypes.c_ulong(arg2), ctypes.c_ulong(arg3), ctypes.c_ulong(arg4),
                              ctypes.c_ulong(arg5)), "prctl")


def die_with_parent() -> None:
    """This process is killed when the process that forked it dies."""
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def close_all_but(keep, start: int = 3) -> None:
    """Close every file descriptor from `start` up but those in `keep`."""
    low = start
    for fd in sorted(n for n in set(keep) if n >= start):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, 65536)


def protect_self() -> None:
    """Make this process non-dumpable: processes of the same uid can no longer open its /proc/<pid>/fd,
    mem or environ, nor ptrace it. For the grading parent and the judge (forks inherit it)."""
    prctl(PR_SET_DUMPABLE, 0)


# -- Landlock ----------------------------------------------------------------------------------

def landlock_abi() -> int:
    """The kernel's Landlock ABI version, 0 without Landlock."""
    result = _libc().syscall(SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0),
                           ctypes.c_uint32(LANDLOCK_CREATE_RULESET_VERSION))
    return max(int(result), 0)


def _fs_rights(abi: int) -> int:
    rights = (1 << 13) - 1  # EXECUTE .. MAKE_SYM, ABI 1
    if abi >= 2:
        rights |= FS_REFER
    if abi >= 3:
        rights |= FS_TRUNCATE
    if abi >= 5:
        rights |= FS_IOCTL_DEV
    return rights


READ = FS_READ_FILE | FS_READ_DIR


def landlock(read: list[str], write: list[str], devices: list[str], abi: int) -> None:
    """Allow reading `read`, everything but executing in `write`, reading, writing and ioctl on the device
    files `devices`; deny every other file access, TCP bind and connect, and signals and abstract unix
    sockets outside this process's descendants."""
    handled = _fs_rights(abi)
    net = NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 else 0
    scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0
    attr = struct.pack("QQQ", handled, net, scoped)
    size = 8 if abi < 4 else 16 if abi < 6 else 24
    buf = ctypes.create_string_buffer(attr[:size], size)
    ruleset = _check(_libc().syscall(SYS_LANDLOCK_CREATE_RULESET, buf, ctypes.c_size_t(size), ctypes.c_uint32(0)),
                     "landlock_create_ruleset")
    try:
        everything_but_exec = handled & ~FS_EXECUTE
        for paths, rights in ((read, READ), (write, everything_but_exec),
                              (devices, FS_READ_FILE | FS_WRITE_FILE | (FS_IOCTL_DEV if abi >= 5 else 0))):
            for path in paths:
                _allow(ruleset, path, rights & handled)
        prctl(PR_SET_NO_NEW_PRIVS, 1)
        _check(_libc().syscall(SYS_LANDLOCK_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)),
               "landlock_restrict_self")
    finally:
        os.close(ruleset)


def _allow(ruleset: int, path: str, rights: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # absent here: nothing to allow
    try:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            rights &= FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV  # file rights only
        rule = struct.pack("=Qi", rights, fd)  # struct landlock_path_beneath_attr is packed
        _check(_libc().syscall(SYS_LANDLOCK_ADD_RULE, ctypes.c_int(ruleset), ctypes.c_int(LANDLOCK_RULE_PATH_BENEATH),
                             ctypes.create_string_buffer(rule, len(rule)), ctypes.c_uint32(0)), f"landlock rule {path}")
    finally:
        os.close(fd)


# -- namespaces ----------------------------------------------------------------------------------

def unshare_all() -> None:
    """New user, mount, PID, network and IPC namespaces; inside, uid 0 stands for this process's uid."""
    uid, gid = os.geteuid(), os.getegid()
    _check(_libc().unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC), "unshare")
    prctl(PR_SET_DUMPABLE, 1)  # a non-dumpable process's /proc/self files are root's: it could not write its maps
    try:
        for name, text in (("setgroups", "deny"), ("uid_map", f"0 {uid} 1"), ("gid_map", f"0 {gid} 1")):
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)
    finally:
        prctl(PR_SET_DUMPABLE, 0)


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    _check(_libc().mount(source and source.encode(), target.encode(), fstype and fstype.encode(), ctypes.c_ulong(flags),
                       data and data.encode()), f"mount {target}")


PRIVATE_FOLDERS = ("/dev/shm", "/tmp", "/run", "/var/tmp")  # each replaced by a folder of the sandbox's scratch
SCRATCH = ".work", ".tmp", ".run", ".var-tmp"  # the work dir's, /tmp's, /run's and /var/tmp's, in /dev/shm's tmpfs


def user_folders() -> tuple[list[str], list[str]]:
    """Where this user's own files and sockets lie, for a sandbox to see none of them: the home folder and the
    XDG folders (emptied, what Python reads kept: `build_mounts`), and the warm service's folders (emptied, always).
    Computed in the judge, whose environment is the grading user's."""
    import pwd

    homes = {os.path.expanduser("~")}
    with contextlib.suppress(KeyError):
        homes.add(pwd.getpwuid(os.getuid()).pw_dir)
    xdg = [os.environ.get(name, "") for name in ("XDG_RUNTIME_DIR", "XDG_CACHE_HOME", "XDG_DATA_HOME",
                                                   "XDG_CONFIG_HOME", "XDG_STATE_HOME")]
    emptied = [f for f in dict.fromkeys([*homes, *xdg]) if f.startswith("/") and f.rstrip("/") and os.path.isdir(f)]
    service = [os.environ.get("TORCH_KATAS_SERVER_DIR", ""), *(os.path.join(f, "torch-katas") for f in xdg if f)]
    service += [os.path.join(home, ".cache", "torch-katas") for home in homes]
    return sorted(emptied), [f for f in dict.fromkeys(service) if f.startswith("/") and os.path.isdir(f)]


def build_mounts(workdir: str, hidden: list[str], keep: Sequence[str] = (), disk: int = 512 << 20,
                 emptied: Sequence[str] = ()) -> None:
    """In the new mount namespace: a /proc of the new PID namespace; one tmpfs of `disk` bytes (a part of the
    sandbox's memory budget) on /dev/shm, whose folders become the work dir, /tmp, /run and /var/tmp, so that
    everything learner code may write lies there, inside that one limit, and is gone with the namespace; the
    `emptied` folders (the user's home, XDG folders) replaced by empty ones; empty read-only folders over `hidden`.
    The work dir, and what Python reads (`keep`: a checkout or a venv in /tmp or in the home folder), are bound back
    in place when they lay in a folder replaced: the whole entry of that folder they lie in, as it was (Landlock
    still decides what is read in it)."""
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    replaced = [f for f in PRIVATE_FOLDERS if os.path.isdir(f) and not os.path.islink(f)]
    replaced += [f for f in emptied if os.path.isdir(f) and not os.path.islink(f) and f not in keep  # (a home that is
                 and not any(f.startswith(outer + "/") for outer in [*PRIVATE_FOLDERS, *emptied])]  # on sys.path stays)
    entries = [f"{folder}/{path[len(folder) + 1:].split('/')[0]}" for path in [workdir, *keep]
               for folder in replaced if path.startswith(folder + "/")]
    kept = {entry: os.open(entry, os.O_PATH | os.O_CLOEXEC) for entry in dict.fromkeys(entries)
            if os.path.lexists(entry)}
    scratch: dict[str, int] = {}
    try:
        _mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, f"mode=1777,size={disk}")
        for name in (*SCRATCH, ".shm"):
            os.mkdir(f"/dev/shm/{name}")
            os.chmod(f"/dev/shm/{name}", 0o1777)
        scratch = {name: os.open(f"/dev/shm/{name}", os.O_PATH | os.O_CLOEXEC) for name in (*SCRATCH, ".shm")}
        for folder, name in (("/tmp", ".tmp"), ("/run", ".run"), ("/var/tmp", ".var-tmp"), ("/dev/shm", ".shm")):
            if folder in replaced:
                _mount(f"/proc/self/fd/{scratch[name]}", folder, None, MS_BIND)
        for folder in replaced:
            if folder not in PRIVATE_FOLDERS:  # a home or XDG folder: nothing written there, nothing of it seen
                _mount("tmpfs", folder, "tmpfs", MS_NOSUID | MS_NODEV, "mode=755,size=1m")
        for entry, fd in kept.items():
            if stat.S_ISDIR(os.fstat(fd).st_mode):
                os.makedirs(entry, mode=0o700, exist_ok=True)
            else:
                open(entry, "a").close()
            _mount(f"/proc/self/fd/{fd}", entry, None, MS_BIND | MS_REC)
        _mount(f"/proc/self/fd/{scratch['.work']}", workdir, None, MS_BIND)
        os.chmod(workdir, 0o700)
    finally:
        for fd in [*kept.values(), *scratch.values()]:
            os.close(fd)
    for folder in hidden:
        if os.path.isdir(folder):
            _mount("tmpfs", folder, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=555")


def pid_max_per_namespace() -> bool:
    """Whether kernel.pid_max belongs to each PID namespace (Linux 6.14+; a child's cannot exceed its
    parent's). Before, it is the machine's own."""
    return tuple(int(n) for n in re.findall(r"\d+", platform.release())[:2]) >= (6, 14)


def limit_processes(limit: int) -> None:
    """In the new PID namespace: PIDs below `limit` only, threads included, so a fork bomb stops there.
    Where pid_max is the machine's own, it is left alone."""
    if not pid_max_per_namespace():
        raise LayerError(0, f"a process limit of its own needs Linux 6.14+ (this is {platform.release()})")
    with open("/proc/sys/kernel/pid_max", "w") as f:
        f.write(str(limit))


# -- identity ----------------------------------------------------------------------------------

def readable_by_others(paths: list[str]) -> str | None:
    """None if a user with no rights of its own can read every path (and traverse its parents); else the
    first folder in the way."""
    for path in paths:
        p = Path(path).resolve()
        for folder in [*reversed(p.parents), p]:
            try:
                mode = folder.stat().st_mode
            except OSError:
                return str(folder)
            if not mode & stat.S_IXOTH or (folder == p and not mode & stat.S_IROTH):
                return str(folder)
    return None


def become(uid: int, gid: int) -> None:
    """Root only: drop to `uid`, `gid`, with no supplementary groups."""
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)


def drop_capabilities() -> None:
    """No capability left, none to regain: the bounding and ambient sets cleared, then capset to zero."""
    last = int(Path("/proc/sys/kernel/cap_last_cap").read_text())
    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
    for cap in range(last + 1):
        try:
            prctl(PR_CAPBSET_DROP, cap)
        except LayerError:
            pass  # already out of the set, or this namespace cannot drop it: capset below still zeroes it
    header = struct.pack("Ii", CAPABILITY_VERSION_3, 0)
    data = bytes(24)  # two struct __user_cap_data_struct, all zero
    _check(_libc().syscall(SYS_CAPSET[platform.machine()], ctypes.create_string_buffer(header, 8),
                         ctypes.create_string_buffer(data, 24)), "capset")
    prctl(PR_SET_NO_NEW_PRIVS, 1)


# -- seccomp -----------------------------------------------------------------------------------

AUDIT_ARCH_X86_64 = 0xC000003E
X32_SYSCALL_BIT = 0x40000000
DENIED_X86_64 = {  # system call -> number; learner code never needs them, exploits and escapes do
    "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "kexec_load": 246, "kexec_file_load": 320,
    "bpf": 321, "perf_event_open": 298, "userfaultfd": 323, "keyctl": 250, "add_key": 248, "request_key": 249,
    "unshare": 272, "setns": 308, "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161,
    "init_module": 175, "finit_module": 313, "delete_module": 176, "open_by_handle_at": 304,
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "acct": 163, "swapon": 167,
    "swapoff": 168, "reboot": 169, "fsopen": 430, "fsmount": 432, "move_mount": 429, "open_tree": 428,
    "mount_setattr": 442, "pidfd_getfd": 438, "kcmp": 312, "process_madvise": 440, "process_mrelease": 448,
    # no new socket of any family: the sandbox's only channel is the one it inherits. A unix socket's connect()
    # cannot be told apart by seccomp (its address is behind a pointer) and Landlock does not govern a named
    # one, so none is made: no path to the service's, the front's or any process's socket can be dialled.
    "socket": 41,
}
SYS_CLONE, SYS_CLONE3, SYS_SOCKETPAIR = 56, 435, 53
NAMESPACE_FLAGS = CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | 0x04000000 | 0x02000000
AF_UNIX, SOCK_STREAM, SOCK_SEQPACKET, SOCK_TYPE_MASK = 1, 1, 5, 0xF
EPERM, ENOSYS = 1, 38


def _bpf(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("HBBI", code, jt, jf, k)


def seccomp_filter() -> bytes:
    """The BPF program: EPERM for the denied calls, for clone() with namespace flags and for a socketpair() other
    than a connected pair of unix stream (or seqpacket) sockets, which can reach nothing but each other (what
    Python's multiprocessing makes); ENOSYS for clone3 (its flags cannot be inspected; libc falls back to
    clone); everything else allowed."""
    LD_W_ABS, JEQ_K, JSET_K, RET_K, AND_K = 0x20, 0x15, 0x45, 0x06, 0x54
    ALLOW, ERRNO = 0x7FFF0000, 0x00050000
    prog = [_bpf(LD_W_ABS, 0, 0, 4),  # seccomp_data.arch
            _bpf(JEQ_K, 1, 0, AUDIT_ARCH_X86_64),
            _bpf(RET_K, 0, 0, ERRNO | EPERM),  # another ABI on this kernel: refuse
            _bpf(LD_W_ABS, 0, 0, 0)]  # seccomp_data.nr
    prog += [_bpf(0x35, 0, 1, X32_SYSCALL_BIT), _bpf(RET_K, 0, 0, ERRNO | EPERM)]  # JGE: x32 calls refused
    for number in DENIED_X86_64.values():
        prog += [_bpf(JEQ_K, 0, 1, number), _bpf(RET_K, 0, 0, ERRNO | EPERM)]
    prog += [_bpf(JEQ_K, 0, 1, SYS_CLONE3), _bpf(RET_K, 0, 0, ERRNO | ENOSYS)]
    prog += [_bpf(JEQ_K, 0, 3, SYS_CLONE),
             _bpf(LD_W_ABS, 0, 0, 16),  # seccomp_data.args[0], low 32 bits (little-endian): the flags
             _bpf(JSET_K, 0, 1, NAMESPACE_FLAGS),
             _bpf(RET_K, 0, 0, ERRNO | EPERM)]
    prog += [_bpf(JEQ_K, 0, 7, SYS_SOCKETPAIR),
             _bpf(LD_W_ABS, 0, 0, 16),  # args[0]: the domain
             _bpf(JEQ_K, 0, 4, AF_UNIX),
             _bpf(LD_W_ABS, 0, 0, 24),  # args[1]: the type, with SOCK_NONBLOCK and SOCK_CLOEXEC
             _bpf(AND_K, 0, 0, SOCK_TYPE_MASK),
             _bpf(JEQ_K, 2, 0, SOCK_STREAM),
             _bpf(JEQ_K, 1, 0, SOCK_SEQPACKET),
             _bpf(RET_K, 0, 0, ERRNO | EPERM)]
    prog += [_bpf(RET_K, 0, 0, ALLOW)]
    return b"".join(prog)


def apply_seccomp() -> None:
    if platform.machine() != "x86_64":
        raise LayerError(0, f"seccomp deny-list written for x86_64, not {platform.machine()}")
    program = seccomp_filter()
    filters = ctypes.create_string_buffer(program, len(program))
    fprog = ctypes.create_string_buffer(struct.pack("HxxxxxxQ", len(program) // 8, ctypes.addressof(filters)), 16)
    prctl(PR_SET_NO_NEW_PRIVS, 1)
    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog))


# -- the plan for one sandbox ----------------------------------------------------------------------

@dataclass
class Plan:
    """What to apply in a sandbox: the folders it may read and write, the ones masked, the device files."""

    workdir: str
    hidden: list[str] = field(default_factory=list)
    cuda: bool = False
    private: tuple[str, ...] = ("grader",)  # packages never readable from site-packages: ours holds the answers
    disk: int = 512 << 20  # the sandbox's tmpfs (work dir, /tmp, /dev/shm...), bytes of its memory budget
    allowed: tuple[str, ...] | None = None  # `readable()` as the judge computed it (a sandbox of the zygote's)
    memory: int | None = None  # the whole memory budget, for a memory cgroup where one can be made (cgroup.py)
    emptied: tuple[str, ...] = ()  # the user's home and XDG folders: seen empty (`user_folders`)
    sockets: tuple[str, ...] = ()  # the warm service's folders: masked, whatever else is seen

    def readable(self) -> list[str]:
        """Python's import path and the system's libraries, minus the hidden folders and any installed copy
        of the private packages (the grader's own carries its checks and solutions)."""
        if self.allowed is not None:
            return list(self.allowed)
        return allowed_reading(tuple(self.hidden), self.cuda, self.private, tuple(sys.path))

    def writable(self) -> list[str]:
        return [self.workdir, "/dev/shm"]

    def devices(self) -> list[str]:
        found = ["/dev/null", "/dev/full"]
        if self.cuda:
            found += [str(p) for p in Path("/dev").glob("nvidia*")]
        return found


@functools.lru_cache(maxsize=16)
def allowed_reading(hidden: tuple[str, ...], cuda: bool, private: tuple[str, ...], path: tuple[str, ...]) -> list[str]:
    """The read-only allow-list (see `Plan.readable`). Cached: the warm parent computes it once before it forks
    (`Plan.readable()` there), and every judge and sandbox inherits the answer."""
    excluded = {Path(h).resolve() for h in hidden}
    roots = {Path(p).resolve() for p in path if p and os.path.isdir(p)}
    excluded |= {root / name for root in roots for name in private if (root / name).is_dir()}
    # an import root that holds hidden folders further down is a clone of the project: never readable
    roots = {r for r in roots if all(e.parent == r or r not in e.parents for e in excluded)}
    keep = [str(p) for root in sorted(roots) for p in _except(root, excluded)]
    system = ["/usr", "/lib", "/lib64", "/lib32", "/bin", "/etc/ld.so.cache", "/etc/localtime", "/etc/passwd",
              "/etc/group", "/etc/nsswitch.conf", "/etc/os-release", "/etc/ssl/certs", "/proc",
              "/sys/devices/system/cpu", "/sys/devices/system/node", "/dev/urandom", "/dev/random", "/dev/zero"]
    if cuda:
        system += ["/proc/driver/nvidia", "/sys/bus/pci", "/sys/devices", "/usr/local/cuda", "/etc/nvidia"]
    return keep + [str(p) for root in system for p in _except(Path(root), excluded)]


def _except(root: Path, excluded: set[Path]) -> list[Path]:
    """`root`, or where it holds excluded folders, its other entries (recursively, links followed): what may be
    allowed."""
    root = root.resolve()
    if root in excluded:
        return []
    if not any(root in e.parents for e in excluded) or not root.is_dir():
        return [root]
    return [path for entry in root.iterdir() for path in _except(entry, excluded)]


@dataclass
class Report:
    """The layers applied in one sandbox, and why any was not."""

    applied: list[str] = field(default_factory=list)
    missing: dict[str, str] = field(default_factory=dict)


def enter_before_fork(plan: Plan, report: Report) -> bool:
    """In the sandbox's first process: identity, then the namespaces. True when the namespaces are made:
    the caller must then fork once more, the child being PID 1 of the new PID namespace."""
    if plan.memory:
        try:
            cgroup.join(plan.memory)
            report.applied.append("memory cgroup")
        except OSError as exc:
            report.missing["memory cgroup"] = f"{exc.strerror or exc}: each process of the sandbox has its own " \
                                              f"memory limit, its files count in it"
    if os.geteuid() == 0:
        blocked = readable_by_others(python_paths())
        if blocked is None:
            uid = DEDICATED_UID_BASE + os.getpid() % 100_000_000
            os.chown(plan.workdir, uid, uid)
            become(uid, uid)
            report.applied.append("dedicated uid")
        else:
            report.missing["dedicated uid"] = f"{blocked} is not readable by other users, so root keeps its uid " \
                                              f"with every capability dropped"
    try:
        unshare_all()
        report.applied.append("namespaces")
        return True
    except (LayerError, OSError) as exc:
        report.missing["namespaces"] = str(exc)
        return False


def enter_after_fork(plan: Plan, report: Report, namespaces: bool) -> None:
    """In the process that will run learner code: mounts, capabilities, Landlock, seccomp."""
    if namespaces:
        try:
            build_mounts(plan.workdir, [*plan.hidden, *plan.sockets], plan.readable(), plan.disk, plan.emptied)
        except (LayerError, OSError) as exc:
            report.applied.remove("namespaces")
            report.missing["namespaces"] = f"mounts: {exc}"
        try:
            limit_processes(PROCESS_LIMIT)
            report.applied.append(f"process limit ({PROCESS_LIMIT})")
        except (LayerError, OSError) as exc:
            report.missing["process limit"] = str(exc)
    try:
        drop_capabilities()
    except (LayerError, OSError) as exc:
        report.missing["capabilities"] = str(exc)
    abi = landlock_abi()
    if abi:
        try:
            landlock(plan.readable(), plan.writable(), plan.devices(), abi)
            report.applied.append(f"landlock (ABI {abi})")
        except (LayerError, OSError) as exc:
            report.missing["landlock"] = str(exc)
    else:
        report.missing["landlock"] = "the kernel offers no Landlock (Linux 5.13+ with it enabled)"
    try:
        apply_seccomp()
        report.applied.append("seccomp")
    except (LayerError, OSError) as exc:
        report.missing["seccomp"] = str(exc)


def python_paths() -> list[str]:
    """What learner code must be able to read for Python and torch to work."""
    return sorted({sys.prefix, sys.base_prefix, os.path.dirname(os.__file__),
                   *(p for p in sys.path if p.endswith("-packages") and os.path.isdir(p))})
