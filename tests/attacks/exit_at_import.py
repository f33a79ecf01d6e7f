# Attack: prints a fake perfect result, then sys.exit(0) while loading.
import sys

print('{"exercise": "ex05", "status": "graded", "score": 10.0, "max_score": 10.0}')
print("6 passed in 0.01s")
sys.exit(0)
