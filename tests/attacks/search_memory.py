# Attack: looks through its own memory for what the judge and the grading parent held: the teacher's environment
# block, the judge's frames (a check's expected values, a batch's jobs), the hidden check module and its reference
# computations, the grader's gradient functions. It prints what it found; none of it may be there.
import ctypes
import gc
import sys
import types
import warnings

warnings.simplefilter("ignore")

SECRET = "hf_secret_token_1234"
found = []

with open("/proc/self/stat", "rb") as f:
    fields = f.read().rsplit(b")", 1)[1].split()
env_start, env_end = int(fields[47]), int(fields[48])
if env_end > env_start and SECRET.encode() in ctypes.string_at(env_start, env_end - env_start):
    found.append("the environment block")
try:
    import posix

    if any(SECRET.encode() in v for v in posix.environ.values()):
        found.append("posix.environ")
except ImportError:
    pass

frame = sys._getframe()  # the sandbox's own frames (serve, _serve: its source, limits, connection) are its own
while frame is not None:
    if frame.f_code.co_filename != __file__ and frame.f_locals is not frame.f_globals \
            and any(v is not None for v in frame.f_locals.values()) \
            and "grader" in frame.f_code.co_filename and frame.f_code.co_name not in ("_serve", "serve", "_load_module"):
        found.append(f"the locals of {frame.f_code.co_name}")
    frame = frame.f_back

for name, module in list(sys.modules.items()):
    if "checks" in name and hasattr(module, "expect_grads") or name in ("grader.gradients", "grader.checking.gradients"):
        found.append(f"sys.modules[{name!r}]")
deeper = []  # what stays in memory no reference leads to, but the garbage collector's lists still hold
gc.unfreeze()
for obj in gc.get_objects():
    if isinstance(obj, types.ModuleType) and "checks" in (getattr(obj, "__file__", "") or ""):
        deeper.append(f"the module {obj.__name__}")
    elif isinstance(obj, types.FunctionType) and obj.__name__ in ("expect_grads", "autograd_gradient", "draw", "loss_of"):
        deeper.append(f"the function {obj.__name__}")
    elif type(obj) is dict and obj.get("__name__", "") in ("grader.gradients", "grader.checking.gradients") or \
            type(obj).__name__ in ("Job", "Grading", "Collection"):
        deeper.append(f"a {type(obj).__name__}")
print("after gc.unfreeze():", sorted(set(deeper)))
print("found:", sorted(set(found)))


def predict(x, w, b):
    return w * x + b
