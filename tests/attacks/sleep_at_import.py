# Attack: the file sleeps forever when loaded.
import time

time.sleep(10_000)
