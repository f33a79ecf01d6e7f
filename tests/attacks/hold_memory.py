# Attack: six child processes each hold 400 MiB (touched, not just mapped), and files fill the work dir and
# /dev/shm: far past --memory together. It prints how many children held their block and what it wrote.
import os
import time

r, w = os.pipe()
for _ in range(6):
    if os.fork() == 0:
        try:
            block = bytearray(400 << 20)
            for i in range(0, len(block), 4096):
                block[i] = 1
            os.write(w, b"1")
            time.sleep(10)
        finally:
            os._exit(0)
os.close(w)
time.sleep(5)
os.set_blocking(r, False)
try:
    held = len(os.read(r, 64))
except BlockingIOError:
    held = 0
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
print(f"held: {held} written: {written}")


def predict(x, w, b):
    return w * x + b
