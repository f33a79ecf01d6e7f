"""Similar submissions: pairs of students whose code for one exercise shares much more than the stub.

Fingerprinting is copydetect's (an optional extra: pip install 'torch-katas[similarity]'): code is
tokenized with names, strings and comments normalised (so renamed variables do not hide a copy), cut into
k-grams, winnowed, and the stub's fingerprints are dropped as boilerplate; fingerprints are a set, so
reordered functions do not hide one either. A pair is listed when the larger of its two shares (the
part of a file found in the other) reaches the threshold. It is for a person to look at: scores never
change.
"""

from __future__ import annotations

import io
import json
from collections import defaultdict
from pathlib import Path

from grader.judge.job import Job
from grader.sandbox.source import SubmissionError, load_source

NOISE = 25  # copydetect's defaults: k-grams of 25 filtered characters, every one kept (a window of 1)
WINDOW = 1
MIN_SHARED = 80  # filtered characters in common, at least: short answers look alike by necessity
INSTALL = "similarity needs copydetect: pip install 'torch-katas[similarity]'"


class MissingExtra(ImportError):
    """copydetect is not installed."""


def require():
    """copydetect's detector module, or MissingExtra with the line that installs it."""
    try:
        from copydetect import detector
    except ImportError:
        raise MissingExtra(INSTALL) from None
    return detector


def _code(path: Path) -> str | None:
    try:
        return "\n".join(code for _, code in load_source(path).chunks)  # a notebook's cells, in order
    except SubmissionError:
        return None


def find_similar(jobs: list[Job], threshold: float) -> list[dict]:
    """Pairs of submissions of one exercise above `threshold`, most similar first; each with both files cut into
    pieces, the shared ones marked (`segments`). Students with identical files are one entry; an entry that is part of a
    larger one is left out (`maximal`)."""
    detector = require()
    import numpy as np  # a dependency of copydetect

    by_exercise = defaultdict(list)
    for job in jobs:
        by_exercise[job.exercise.id].append(job)
    found = []
    for jobs_of in by_exercise.values():
        exercise = jobs_of[0].exercise
        stub = detector.CodeFingerprint(str(exercise.stub), NOISE, WINDOW)
        boilerplate = np.unique(np.array(list(stub.hashes)))
        same_code: dict[str, list[str]] = defaultdict(list)
        for job in jobs_of:
            code = _code(job.path)
            if code is not None:
                same_code[code].append(job.student)
        prints = [(students, detector.CodeFingerprint("submission.py", NOISE, WINDOW,
                                                      boilerplate=boilerplate, fp=io.StringIO(code)))
                  for code, students in same_code.items()]
        prints = [(students, fp) for students, fp in prints if fp.hashes]
        for i, (students_a, a) in enumerate(prints):
            candidates = [(students_a, a)] if len(students_a) > 1 else []
            candidates += [(b_students, b) for b_students, b in prints[i + 1:] if a.hashes & b.hashes]
            for students_b, b in candidates:
                shared, (share_a, share_b), (slices_a, slices_b) = detector.compare_files(a, b)
                similarity = max(share_a, share_b)
                if similarity < threshold or shared < MIN_SHARED:
                    continue
                left, right = segments(a.raw_code, slices_a), segments(b.raw_code, slices_b)
                group = students_a if b is a else students_a + students_b
                found.append({"exercise": exercise.id, "students": group, "similarity": round(float(similarity), 3),
                              "identical": b is a, "left": left, "right": right})
    return maximal(sorted(found, key=lambda p: (-p["similarity"], p["exercise"], p["students"])))


def maximal(entries: list[dict]) -> list[dict]:
    """The entries whose students are no part of a larger entry's of the same exercise (students with identical
    files, then the same students with one more similar: only the larger one is listed)."""
    sets = [(e["exercise"], frozenset(e["students"])) for e in entries]
    return [e for e, (ex, group) in zip(entries, sets)
            if not any(ex == other_ex and group < other for other_ex, other in sets)]


def segments(code: str, slices) -> list[tuple[str, bool]]:
    """`code` cut into (text, shared) pieces at copydetect's slices (a 2 x n array of start and end offsets)."""
    pieces, at = [], 0
    for start, end in zip(slices[0], slices[1]) if len(slices) else ():
        pieces += [(code[at:start], False), (code[start:end], True)]
        at = end
    return [piece for piece in pieces + [(code[at:], False)] if piece[0]]


def write_similarity(pairs: list[dict], out: Path) -> None:
    """similarity.json (who, which exercise, how similar) and similarity.html (the files side by side)."""
    from grader.report.pages import write

    summary = [{k: p[k] for k in ("exercise", "students", "similarity", "identical")} for p in pairs]
    (out / "similarity.json").write_text(json.dumps(summary, indent=1, ensure_ascii=False), encoding="utf-8")
    intro = (f"{len(pairs)} {'pair' if len(pairs) == 1 else 'pairs'} of submissions share more than the stub gives "
             "(renamed names and reordered functions still count as shared). This is for a person to look at: "
             "scores are unchanged.")
    write(out / "similarity.html", "similarity.html.j2", lang="en", title="Similar submissions", intro=intro,
          pairs=[{**p, "what": "identical files" if p["identical"] else f"{100 * p['similarity']:.0f}% shared"}
                 for p in pairs])
