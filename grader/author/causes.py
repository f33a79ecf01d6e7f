"""False causes: a mutant whose failure message names a mistake the mutant does not make.

A mutant is the solution with one known change (mutants.py), so the mistake it makes is known: it lies in the code
it changed. A check that names a cause (a mistake key, `fail(..., key=...)`) claims the code has that mistake. The
causes below are the ones a message names about code, each with the code it lives in: a key of the device cause on a
mutant that changed no device, tensor placement or GPU branch is a false cause, and so is a mask's key on a change
that touched no mask. Keys that describe what a value is (wrong-values, nan, factor-2, wrong-shape...) name no
cause and are never false; the keys of no cause here are not judged. The grader's own error reaching a message
(`check-error`: the check could not finish) is always a false cause: it blames the learner for the grader.

Process: the words a mutant changed (the names, attributes, keywords and strings of its code before and after, and
the call and keyword its changed expression sits in), against each cause's keys (fnmatch patterns) and words; a
cause also belongs to the operators that make it whatever the words (the device family, a `with` block dropped).
Trust: the mutants are the author's own solution, changed by the toolkit; nothing here runs code.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Cause:
    name: str
    keys: tuple[str, ...]  # the keys that name this cause (fnmatch patterns)
    words: frozenset[str]  # a change that has it touches one of these names (or a name made of them: masked_fill)
    operators: frozenset[str] = frozenset()  # mutant operators that make it, whatever the words


def _cause(name: str, keys: str, words: str, operators: str = "") -> Cause:
    return Cause(name, tuple(keys.split()), frozenset(words.split()), frozenset(operators.split()))


CAUSES = (
    _cause("device", "moved-to-gpu gpu-at-import *cuda* *gpu* *device* dropout-mask-on-cpu pin-memory-*",
           "cuda cpu device to is_available mps DEVICE pin_memory non_blocking",
           "gpu-when-available gpu-factory mps-first gpu-only cpu-only device-type-guard gpu-when-available-at-import "
           "gpu-factory-at-import cuda-call"),
    _cause("graph", "graph-* *-graph *-detached no-grad-fn no-requires-grad requires-grad* *-requires-grad "
                    "gradient-hidden-from-autograd lora-no-grad",
           "detach detach_ requires_grad requires_grad_ no_grad enable_grad inference_mode set_grad_enabled item data "
           "tensor as_tensor numpy tolist clone Parameter grad backward retain_graph copy_",
           "drop-with grad-not-backward"),
    _cause("mask", "mask-* causal-* masked-row-* no-causal-mask", "mask masked masked_fill where tril triu causal "
           "diagonal inf padded padding allowed key_padding_mask attention_mask"),
    _cause("keepdim", "keepdim-* *-keepdim *-without-keepdim size-1-dims squeeze-* squeezed kept-reduced-dim",
           "keepdim squeeze squeeze_ unsqueeze unsqueeze_ None view reshape flatten expand", "squeeze-all"),
    _cause("loop axis", "wrong-time-axis", "range enumerate unbind select shape size for"),
    _cause("seed", "*seed* *-not-seeded nothing-seeded generator-not-seeded global-rng",
           "seed manual_seed Generator generator random rng seed_worker worker_init_fn hash default_rng fork_rng "
           "get_rng_state set_rng_state", "hash-seed"),
    _cause("groups", "groups-*", "groups group"),
    _cause("learning rate", "lr-* *-lr ignores-lr-argument scheduler-wrong-lr decay-without-lr optimizer-lr-differs",
           "lr learning_rate step_size gamma"),
)
GRADER_ERROR = "check-error"  # the key the judge gives a check that could not finish: the grader's own error


def words(code: str) -> set[str]:
    """The names of `code` and their parts (`masked_fill`: masked_fill, masked, fill), its string literals too."""
    names = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", code))
    return names | {part for name in names for part in name.split("_") if part}


def cause_of(key: str) -> Cause | None:
    """The cause a key names; None for a key that describes a value, or one no cause here knows."""
    return next((c for c in CAUSES if any(fnmatch.fnmatchcase(key, k) for k in c.keys)), None)


def false(key: str | None, changed: set[str], operator: str) -> bool:
    """Whether naming `key` blames a mutant (its `operator`, the words it `changed`) for a mistake it does not make."""
    if key is None:
        return False
    if key == GRADER_ERROR:
        return True
    cause = cause_of(key)
    return cause is not None and operator not in cause.operators and not (cause.words & changed)


def false_causes(changed: set[str], operator: str, failed: Iterable[tuple[str, str | None, str]]) -> list[dict]:
    """{check, key, message} for each failed check (check id, key, English message) that names a false cause."""
    return [{"check": check, "key": key, "message": message} for check, key, message in failed
            if false(key, changed, operator)]
