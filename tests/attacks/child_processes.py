# Attack: leaves child processes running (they must all be killed when grading ends).
import subprocess

subprocess.Popen(["sleep", "4242.25"])
subprocess.Popen(["sh", "-c", "sleep 4242.5"])


def predict(x, w, b):
    return w * x + b
