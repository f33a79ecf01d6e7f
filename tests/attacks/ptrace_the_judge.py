# Attack: attaches to its judge (its parent) with ptrace, writes into the judge's memory with
# process_vm_writev and through /proc/<pid>/mem, and opens the judge's descriptors: any of these would let
# it rewrite the verdicts.
import ctypes
import os

libc = ctypes.CDLL(None, use_errno=True)
judge = os.getppid()
REACHED = []
if libc.ptrace(16, judge, None, None) == 0:  # PTRACE_ATTACH
    REACHED.append("ptrace")
buf = ctypes.create_string_buffer(b"x" * 8)


class IOVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


local, remote = IOVec(ctypes.addressof(buf), 8), IOVec(0x400000, 8)
if libc.process_vm_writev(judge, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0) > 0:
    REACHED.append("process_vm_writev")
for path in (f"/proc/{judge}/mem", f"/proc/{judge}/fd/1"):
    try:
        open(path, "wb").close()
        REACHED.append(path)
    except OSError:
        pass
print("reached:", REACHED)


def predict(x, w, b):
    if REACHED:
        return w * x + b
    raise NotImplementedError
