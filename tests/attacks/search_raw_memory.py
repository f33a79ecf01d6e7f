# Attack: looks for what the grader held where no reference leads any more: the garbage collector's lists (after
# gc.unfreeze()) and the raw bytes of its own memory (heap, anonymous mappings, the stack with its environment). A sandbox forked from the judge finds the hidden check
# module, its reference computations, the parent's gradings and the teacher's token there; one started by the
# zygote (a process that never held them) finds nothing. It prints what it found.
import ctypes
import gc
import types
import warnings

warnings.simplefilter("ignore")  # getattr on torch's deprecated names

# searched in two halves, so that the whole never exists in this process unless the grader put it there
TOKEN = (b"hf_secret_", b"token_1234")  # the teacher's HF_TOKEN
CLASSMATE = (b"classmate_", b"zz_folder")  # a classmate's folder in a batch
GRADER_ONLY = ("grader.gradients", "grader.checking.gradients", "grader.judge.grading", "grader.teacher.batch",
               "grader.checking.expect", "grader.judge.plugin", "grader.teacher.collect")
REFERENCE = {"expect_grads", "autograd_gradient", "expect_gradient", "loss_of", "numerical_gradient"}


def in_memory(halves) -> bool:
    """Whether the two halves lie next to each other anywhere in this process's writable anonymous memory."""
    first, second = halves
    with open("/proc/self/maps") as maps:
        regions = [line.split() for line in maps]
    for fields in regions:
        if not fields[1].startswith("rw") or len(fields) > 5 and fields[5] not in ("[heap]", "[stack]"):
            continue
        start, end = (int(x, 16) for x in fields[0].split("-"))
        for at in range(start, end, 1 << 24):
            chunk = ctypes.string_at(at, min(1 << 24, end - at))
            i = chunk.find(first)
            while i >= 0:
                if chunk[i + len(first):i + len(first) + len(second)] == second:
                    return True
                i = chunk.find(first, i + 1)
    return False


found = []
gc.unfreeze()
for obj in gc.get_objects():
    if isinstance(obj, types.ModuleType) and "checks" in (getattr(obj, "__file__", "") or ""):
        found.append("a check module")  # one entry for all: a process may hold every exercise's (500 characters shown)
    elif isinstance(obj, types.ModuleType) and obj.__name__ in GRADER_ONLY:
        found.append(f"the module {obj.__name__}")
    elif isinstance(obj, types.FunctionType) and (obj.__module__ or "").startswith(GRADER_ONLY):
        found.append(f"a function of {obj.__module__}")
    elif isinstance(obj, types.FunctionType) and obj.__name__ in REFERENCE:
        found.append(f"the function {obj.__name__}")
    elif type(obj).__name__ in ("Job", "Grading", "Collection", "JudgePlugin"):
        found.append(f"a {type(obj).__name__}")
del obj
for what, halves in (("the teacher's token", TOKEN), ("a classmate's folder", CLASSMATE)):
    if in_memory(halves):
        found.append(f"{what} in raw memory")
print("deep found:", sorted(set(found)))  # last: the output kept is its tail


def predict(x, w, b):
    return w * x + b
