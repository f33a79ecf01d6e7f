# Attack: six child processes each hold 400 MiB (touched, not just mapped), and files fill the work dir and
# /dev/shm: far past --memory together. It prints how many children still held their block once the files were
# written (asked over a pipe: a child the kernel killed meanwhile answers nothing), and how many MiB it wrote.
import os

ready_r, ready_w = os.pipe()
children = []  # (a pipe to ask the child, a pipe it answers on)
for _ in range(6):
    (ask_r, ask_w), (answer_r, answer_w) = os.pipe(), os.pipe()
    if os.fork() == 0:
        try:
            block = bytearray(400 << 20)
            for i in range(0, len(block), 4096):
                block[i] = 1
            os.write(ready_w, b"1")
            os.close(ready_w)  # the parent reads to the end once every child said so or is gone
            os.read(ask_r, 1)  # until the parent asks
            os.write(answer_w, b"1")
        finally:
            os._exit(0)
    os.close(ask_r)
    os.close(answer_w)
    children.append((ask_w, answer_r))
os.close(ready_w)
ready = b""
while len(ready) < 6:
    more = os.read(ready_r, 6)  # each child once it holds its block; nothing more once every child is gone
    if not more:
        break
    ready += more
written = 0
for n in range(64):
    try:
        with open(os.path.join("." if n % 2 else "/dev/shm", f"fill{n}.bin"), "wb") as f:
            for _ in range(32):
                f.write(b"\1" * (1 << 20))
                f.flush()
                written += 1
    except OSError:
        pass
held = 0
for ask, answer in children:
    try:
        os.write(ask, b"?")
    except BrokenPipeError:  # gone
        continue
    held += os.read(answer, 1) == b"1"  # b"" once a killed child's memory and files are released
print(f"held: {held} written: {written}")


def predict(x, w, b):
    return w * x + b
