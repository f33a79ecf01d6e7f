"""A check decides the same on every seed: fs19's statistical checks once passed or failed a mistake by the luck of
the draw (the kept set of a slip sometimes equal to the statement's); its top_p is now drawn where every slip the
check names is told apart."""

import pytest
import torch

from conftest import run_grade
from grader.checking.expect import DRAW, use_variant
from grader.checks import fs19_sampling as fs19


@pytest.fixture(params=("first", "last"))  # exercise.toml's [variants.temperature]
def placement(request):
    """The temperature's place in the chain, drawn as the judge draws it, and the judge's draw put back after."""
    saved = dict(DRAW)
    use_variant({"temperature": {"name": request.param}})
    yield request.param
    use_variant(saved)


def kept_sets(logits, kwargs) -> list[torch.Tensor]:
    """The kept set of the statement's rule and of each slip at `kwargs`."""
    return [fs19.expected(logits, **kwargs, **slip) > 0 for slip in [{}, *fs19.slip_kwargs()]]


def test_fs19_support_case_tells_every_slip_apart_at_the_p_drawn(placement):
    for seed in range(40):
        row, kwargs = fs19.designed(torch.Generator().manual_seed(seed), lambda rng: fs19.support_case(rng, 3000),
                                    "support")
        want = fs19.expected(row, **kwargs)[0]
        assert (want > 0).sum() >= 2 and want[want > 0].min() >= 0.02
        for slip in fs19.slip_kwargs():
            if "renorm" not in slip:
                assert fs19.drawn_apart(want, fs19.expected(row, **kwargs, **slip)[0], 3000), (seed, slip)
        for shift in (-1.5e-3, 1.5e-3):  # p sits inside its window: float32 rounding cannot change a kept set
            moved = {**kwargs, "top_p": kwargs["top_p"] + shift}
            assert all(torch.equal(a, b) for a, b in zip(kept_sets(row, kwargs), kept_sets(row, moved))), seed


def test_fs19_choose_p_returns_none_where_no_window_qualifies():
    rng = torch.Generator().manual_seed(0)
    assert fs19.choose_p(rng, fs19.draw_logits(rng, 2, 8), {"temperature": 0.5}, lambda p: False) is None
    with pytest.raises(RuntimeError, match="no support case"):
        fs19.designed(rng, lambda rng: None, "support", tries=3)


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_fs19_verdicts_do_not_depend_on_the_seed():
    proc = run_grade("validate", "fs19", "--seeds", "20", "--lang", "en", timeout=1800)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "20 of 20 validations ok" in proc.stdout
    assert "changes its verdict with the seed" not in proc.stdout + proc.stderr
