# Attack: writes files outside its working directory: /tmp, the home folder, the folder it was loaded from
# and the grader package, and plants a .pth file in site-packages.
import os
import site
import sys

TARGETS = ["/tmp/torch-katas-planted.txt", os.path.expanduser("~root/torch-katas-planted.txt"),
           os.path.join(os.path.dirname(os.path.abspath(sys.modules["grader"].__file__)), "planted.py"),
           *(os.path.join(p, "torch_katas_planted.pth") for p in site.getsitepackages())]
for target in TARGETS:
    try:
        with open(target, "w") as f:
            f.write("planted\n")
    except OSError:
        pass


def predict(x, w, b):
    return w * x + b
