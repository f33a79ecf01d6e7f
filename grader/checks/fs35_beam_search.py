"""Hidden checks of fs35: beam search over a tiny deterministic model, with finished hypotheses and a length penalty.

The model is a function of the whole prefix, built from three small tables drawn per check: the logits of the next
token are A[last token] + B[prefix length - 1] + C[sum of the prefix % 3], log-softmaxed in float32
(`model_log_probs`, the same code in the probe that hands it to the learner's `beam_search` and in the judge). The
expected hypotheses come from `search`, the statement's rules computed here in float64 on the same tables; it also
computes each named slip (log-probs not summed, the top candidates taken within one beam, EOS treated as an ordinary
token, a finished hypothesis not keeping its slot, the live beams dropped at max_len, the length penalty left out,
multiplied, of the other style or counting bos).

Every verdict is exact, never the luck of a draw: a case is drawn again until every top-k the search takes is
decided by a margin of 1e-3 (float32 sums cannot flip it), the final scores are 1e-3 apart, and the right answer
differs from each slip the check names (which then names it only when it alone explains the hypotheses returned).

Kata variants: `variant("penalty")`: GNMT's ((5 + length) / 6) ** alpha or length ** alpha; each is the other's slip.
"""

import torch

from grader.checking import Text, check, expect_number, fail, is_number, learner_call, matches, pretend_cuda, probe, \
    variant, verbatim
from grader.devices import fail_if_gpu, fail_if_gpu_anew, imported_with_gpu

# -- probes (run in the sandbox) --------------------------------------------------------------


def model_log_probs(tables, prefixes):
    """The tiny model: [N, V] float32 log-probs of the next token for prefixes [N, T] (int64, bos first)."""
    a, b, c = tables
    prefixes = torch.as_tensor(prefixes).long().reshape(-1, torch.as_tensor(prefixes).shape[-1])
    logits = a[prefixes[:, -1]] + b[prefixes.shape[1] - 1] + c[prefixes.sum(1) % c.shape[0]]
    return torch.log_softmax(logits.float(), dim=-1)


@probe
def searched(module, tables, bos, eos, beam_size, max_len, alpha, gpu=False):
    """`beam_search` with the tiny model as log_probs_fn: what it returned, and the shapes of the prefixes it passed;
    with `gpu`, what named CUDA with a GPU pretended, then with the file imported anew with it there."""
    calls = []

    def log_probs_fn(prefixes):
        calls.append(list(prefixes.shape) if isinstance(prefixes, torch.Tensor) else type(prefixes).__name__)
        return model_log_probs(tables, prefixes)

    if gpu:
        with pretend_cuda(module) as seen:
            learner_call(module, module.beam_search, log_probs_fn, bos, eos, beam_size, max_len, alpha)

        def again(fresh, _seen) -> None:
            learner_call(fresh, fresh.beam_search, log_probs_fn, bos, eos, beam_size, max_len, alpha)

        return {"cuda": seen.calls, "anew": imported_with_gpu(module, again)}
    result = module.beam_search(log_probs_fn, bos, eos, beam_size, max_len, alpha)
    return {"result": result, "calls": calls}


# -- judge side -----------------------------------------------------------------------------------

def randint(rng, low: int, high: int) -> int:
    """An int in [low, high], drawn from the check's generator."""
    return int(torch.randint(low, high + 1, (1,), generator=rng))


def uniform(rng, low: float, high: float) -> float:
    return low + (high - low) * float(torch.rand((), generator=rng))


def gnmt() -> bool:
    return variant("penalty")["name"] == "gnmt"


def penalty(length: int, alpha: float, style: str) -> float:
    return ((5 + length) / 6) ** alpha if style == "gnmt" else length ** alpha


SLIPS = {
    "not-accumulated": ("it matches the candidates ranked by the new token's log-prob alone: a beam's score is the sum "
                            "of the log-probs of all its tokens, so add the beam's score to each candidate's log-prob.",
                            "它与只按新词元的 log-prob 给候选排序的结果一致：一个 beam 的分数是它所有词元的 log-prob 之和，"
                            "所以要把 beam 的分数加到每个候选的 log-prob 上。"),
    "topk-per-beam": ("it matches every new beam taken from the best beam's row: the top candidates are chosen among "
                          "all live beams x all tokens together (flatten the [N, V] scores, then topk).",
                          "它与所有新 beam 都取自最好的那个 beam 的那一行的结果一致：最好的候选要在所有存活 beam x 所有词元中"
                          "一起挑选（先把 [N, V] 的分数展平，再 topk）。"),
    "eos-not-finished": ("it matches EOS treated as an ordinary token: a candidate that ends in EOS is a finished "
                             "hypothesis, never extended again.", "它与把 EOS 当作普通词元的结果一致：以 EOS 结尾的候选"
                             "是一个完成的假设，之后不再扩展。"),
    "finished-no-slot": ("it matches beam_size live beams kept after hypotheses finished: a finished hypothesis keeps "
                             "its slot, so each step keeps beam_size - (finished so far) candidates.",
                             "它与假设完成之后仍保留 beam_size 个存活 beam 的结果一致：完成的假设占着它的名额，所以每一步只保留 "
                             "beam_size - (已完成的个数) 个候选。"),
    "live-dropped": ("it matches the beams still live at max_len left out: when max_len is reached, each live beam "
                         "ends there and is returned too, with length max_len.", "它与丢掉到 max_len 时仍存活的 beam 的"
                         "结果一致：达到 max_len 时，每个存活的 beam 就在那里结束，也要返回，长度为 max_len。"),
    "no-penalty": ("it matches the summed log-probs without the length penalty: each hypothesis's score is divided "
                       "by the length penalty of its length.", "它与没有除以长度惩罚的 log-prob 之和一致：每个假设的分数都要"
                       "除以它的长度对应的长度惩罚。"),
    "penalty-multiplied": ("it matches the summed log-probs multiplied by the length penalty: they are divided by it "
                               "(the sums are negative, so dividing by a penalty above 1 favours longer hypotheses).",
                               "它与 log-prob 之和乘以长度惩罚的结果一致：应该除以它（和是负数，除以大于 1 的惩罚会偏向更长的"
                               "假设）。"),
    "penalty-style": ("it matches the other length penalty: here it is {formula}.",
                          "它与另一种长度惩罚的结果一致：这里是 {formula}。"),
    "length-with-bos": ("it matches a length that counts bos: the length is the number of tokens generated after "
                            "bos, EOS included.", "它与把 bos 计入长度的结果一致：长度是 bos 之后生成的词元个数，包括 EOS。"),
}


def formula() -> str:
    return "((5 + length) / 6) ** alpha" if gnmt() else "length ** alpha"


def search(tables, bos, eos, beam_size, max_len, alpha, slip=None):
    """The hypotheses by the statement's rules (or with one slip), best first, and the smallest margin any top-k or
    the final order was decided by."""
    style = "gnmt" if gnmt() else "divide"
    if slip == "penalty-style":
        style = "divide" if gnmt() else "gnmt"

    def final(seq, total):
        length = len(seq) + (slip == "length-with-bos")
        lp = penalty(length, alpha, style)
        return total if slip == "no-penalty" else total * lp if slip == "penalty-multiplied" else total / lp

    live, finished, margin = [([bos], 0.0)], [], float("inf")
    for _ in range(max_len):
        width = beam_size if slip == "finished-no-slot" else beam_size - len(finished)
        if not live or width <= 0:
            break
        log_probs = model_log_probs(tables, torch.tensor([seq for seq, _ in live])).double()
        totals = log_probs if slip == "not-accumulated" else \
            torch.tensor([s for _, s in live], dtype=torch.float64)[:, None] + log_probs
        if slip == "topk-per-beam":
            totals = totals[:1]
        ranked, order = totals.flatten().sort(descending=True)
        if width < len(ranked):
            margin = min(margin, float(ranked[width - 1] - ranked[width]))
        vocab = totals.shape[1]
        live_next = []
        for total, i in zip(ranked[:width].tolist(), order[:width].tolist()):
            beam = i // vocab if slip != "topk-per-beam" else 0
            seq = live[beam][0] + [i % vocab]
            if seq[-1] == eos and slip != "eos-not-finished":
                finished.append((seq[1:], final(seq[1:], total)))
            else:
                live_next.append((seq, total))
        live = live_next
        if slip == "finished-no-slot" and len(finished) >= beam_size:
            break
    if slip != "live-dropped":
        finished += [(seq[1:], final(seq[1:], total)) for seq, total in live]
    finished.sort(key=lambda h: h[1], reverse=True)
    if slip == "finished-no-slot":
        finished = finished[:beam_size]
    scores = [s for _, s in finished]
    margin = min([margin] + [a - b for a, b in zip(scores, scores[1:])])
    return finished, margin


def same(got, want) -> bool:
    return len(got) == len(want) and all(
        g[0] == w[0] and abs(g[1] - w[1]) <= 1e-4 * abs(w[1]) + 1e-5 for g, w in zip(got, want))


def draw_tables(rng, vocab, max_len, eos, eos_bias):
    b = 1.5 * torch.randn(max_len, vocab, generator=rng)
    b[:, eos] += eos_bias
    return [1.5 * torch.randn(vocab, vocab, generator=rng), b, 1.5 * torch.randn(3, vocab, generator=rng)]


def designed(rng, make, what: str, tries=200):
    """A case from `make(rng)` (None for a draw that does not do what the check needs), every decision of the search
    at least 1e-3 apart; a grader bug, never a learner's, when none is found in `tries` draws."""
    for _ in range(tries):
        case = make(rng)
        if case is not None and search(**case)[1] > 1e-3:
            return case
    raise RuntimeError(f"fs35: no {what} case found in {tries} draws")


def apart(case, *slips) -> bool:
    """Whether the right hypotheses and each slip's all differ from one another (a wrong answer can neither pass nor
    be misnamed)."""
    found = [search(**case)[0]] + [search(**case, slip=slip)[0] for slip in slips]
    return all(not same(a, b) for i, a in enumerate(found) for b in found[i + 1:])


def differs(case, *slips) -> bool:
    """Whether each slip's hypotheses differ from the right ones (so a check fails it on every draw)."""
    want = search(**case)[0]
    return all(not same(search(**case, slip=slip)[0], want) for slip in slips)


def case_of(rng, vocab, max_len, beam_size, eos_bias, alpha):
    bos, eos = torch.randperm(vocab, generator=rng)[:2].tolist()
    return {"tables": draw_tables(rng, vocab, max_len, eos, eos_bias), "bos": bos, "eos": eos,
            "beam_size": beam_size, "max_len": max_len, "alpha": alpha}


def call_text(case) -> Text:
    return Text("beam_search(log_probs_fn, bos={bos}, eos={eos}, beam_size={k}, max_len={n}, alpha={alpha})",
                bos=case["bos"], eos=case["eos"], k=case["beam_size"], n=case["max_len"],
                alpha=verbatim(f"{case['alpha']:.3g}"))


def hypotheses(value, what):
    """The learner's result as [(tokens, score)], or a failure saying what it should look like."""
    if isinstance(value, (list, tuple)) and all(isinstance(h, (list, tuple)) and len(h) == 2 for h in value):
        found = []
        for seq, score in value:
            seq = seq.tolist() if isinstance(seq, torch.Tensor) and seq.dim() == 1 else seq
            if isinstance(score, torch.Tensor) and score.numel() == 1:
                score = float(score)
            if not (isinstance(seq, (list, tuple)) and all(is_number(t, int) for t in seq)
                    and (is_number(score, float) or is_number(score, int))):
                break
            found.append(([int(t) for t in seq], float(score)))
        else:
            return found
    fail("{what} returned {got}: it returns a list of (tokens, score) pairs, best first, where tokens is a list of "
         "ints (the tokens after bos) and score a float.", "{what} 返回了 {got}：它应返回一个由 (tokens, score) 组成的"
         "列表，最好的在前，其中 tokens 是 int 的列表（bos 之后的词元），score 是 float。", what=what,
         got=verbatim(repr(value)[:200]), key="result-format")


def shown(hyps) -> str:
    return "[" + ", ".join(f"({seq}, {score:.4f})" for seq, score in hyps) + "]"


def expect_search(submission, case, *slips):
    what = call_text(case)
    run = submission.probe(searched, case["tables"], case["bos"], case["eos"], case["beam_size"], case["max_len"],
                           case["alpha"], what="`beam_search`")
    got = hypotheses(run["result"], what)
    want = search(**case)[0]
    if same(got, want):
        return
    if any(not isinstance(c, list) or len(c) != 2 for c in run["calls"]):
        fail("{what} called log_probs_fn with {seen}: it takes the live beams' prefixes as one int64 tensor [N, T] "
             "(bos first, then the tokens chosen so far).", "{what} 调用 log_probs_fn 时传入了 {seen}：它接受所有存活 "
             "beam 的前缀组成的一个 int64 tensor [N, T]（先是 bos，再是目前选出的词元）。", what=what,
             seen=verbatim(str(next(c for c in run["calls"] if not isinstance(c, list) or len(c) != 2))),
             key="prefix-shape")
    if got and all(seq[:1] == [case["bos"]] for seq, _ in got) and same([(s[1:], v) for s, v in got], want):
        fail("{what} returned hypotheses that start with bos: return the tokens generated after bos.",
             "{what} 返回的假设以 bos 开头：要返回 bos 之后生成的词元。", what=what, key="bos-returned")
    named = [slip for slip in slips if same(got, search(**case, slip=slip)[0])]
    if len(named) == 1:
        fail(Text("{what} should return {want}, got {got}: {why}", "{what} 应返回 {want}，实际为 {got}：{why}",
                  what=what, want=verbatim(shown(want)), got=verbatim(shown(got)),
                  why=Text(*SLIPS[named[0]], formula=verbatim(formula()))), key=named[0])
    if sorted(got, key=lambda h: -h[1]) != got:
        fail("{what} returned {got}: the hypotheses go best first, by their score with the length penalty.",
             "{what} 返回了 {got}：假设要按带长度惩罚的分数从高到低排列。", what=what, got=verbatim(shown(got)),
             key="not-sorted")
    fail("{what} should return {want}, got {got}.", "{what} 应返回 {want}，实际为 {got}。", what=what,
         want=verbatim(shown(want)), got=verbatim(shown(got)), key="wrong-hypotheses")


# -- the checks -------------------------------------------------------------------------------------

@check("beam_search returns beam_size (tokens, score) pairs, best first, each at most max_len tokens", points=1,
       zh="beam_search 返回 beam_size 个 (tokens, score) 对，最好的在前，每个最多 max_len 个词元")
def test_format(submission, rng):
    case = case_of(rng, randint(rng, 5, 7), randint(rng, 3, 4), randint(rng, 2, 3), 0.0, 1.0)
    what = call_text(case)
    run = submission.probe(searched, case["tables"], case["bos"], case["eos"], case["beam_size"], case["max_len"],
                           case["alpha"], what="`beam_search`")
    got = hypotheses(run["result"], what)
    if len(got) != case["beam_size"] or any(not 1 <= len(seq) <= case["max_len"] for seq, _ in got):
        fail("{what} returned {got}: it returns beam_size = {k} hypotheses, each of 1 to max_len = {n} tokens after "
             "bos.", "{what} 返回了 {got}：它应返回 beam_size = {k} 个假设，每个是 bos 之后的 1 到 max_len = {n} 个词元。",
             what=what, got=verbatim(shown(got)), k=case["beam_size"], n=case["max_len"], key="result-format")
    if sorted(got, key=lambda h: -h[1]) != got:
        fail("{what} returned {got}: the hypotheses go best first, by their score with the length penalty.",
             "{what} 返回了 {got}：假设要按带长度惩罚的分数从高到低排列。", what=what, got=verbatim(shown(got)),
             key="not-sorted")


@check("beam_size = 1 is greedy decoding", points=1, zh="beam_size = 1 就是贪心解码", depends="format")
def test_greedy(submission, rng):
    slips = ("not-accumulated", "no-penalty", "penalty-multiplied", "penalty-style", "length-with-bos")

    def make(rng):
        case = case_of(rng, randint(rng, 5, 7), randint(rng, 3, 5), 1, uniform(rng, 0.0, 1.5), uniform(rng, 0.5, 1.0))
        (seq, _), = search(**case)[0]
        finished = seq[-1] == case["eos"] and len(seq) < case["max_len"]  # greedy meets EOS early, on every draw
        return case if finished and apart(case, *slips) else None

    expect_search(submission, designed(rng, make, "greedy"), *slips)


@check("log-probs are summed along each beam, the best candidates taken among all beams x tokens", points=2,
       zh="沿每个 beam 累加 log-prob，最好的候选从所有 beam x 词元中挑选", depends="greedy")
def test_accumulate(submission, rng):
    def make(rng):  # EOS never chosen, no length penalty: the summed log-probs alone decide
        case = case_of(rng, randint(rng, 5, 7), randint(rng, 3, 4), randint(rng, 2, 3), -30.0, 0.0)
        greedy = search(**{**case, "beam_size": 1})[0][0][0]
        if search(**case)[0][0][0] == greedy or not apart(case, "not-accumulated", "topk-per-beam"):
            return None  # the best beam must beat greedy decoding
        return case

    expect_search(submission, designed(rng, make, "accumulate"), "not-accumulated", "topk-per-beam")


@check("a candidate ending in EOS is finished: never extended, and it keeps its slot", points=2,
       zh="以 EOS 结尾的候选就完成了：不再扩展，并占着它的名额", depends="accumulate")
def test_finished(submission, rng):
    def make(rng):
        case = case_of(rng, randint(rng, 5, 7), randint(rng, 4, 5), randint(rng, 3, 4), uniform(rng, 0.5, 2.0), 0.0)
        hyps = search(**case)[0]
        early = [seq for seq, _ in hyps if len(seq) < case["max_len"]]
        late = [seq for seq, _ in hyps if len(seq) == case["max_len"] and seq[-1] != case["eos"]]
        return case if early and late and apart(case, *slips) else None

    slips = ("eos-not-finished", "finished-no-slot", "live-dropped", "not-accumulated", "topk-per-beam")
    expect_search(submission, designed(rng, make, "finished"), *slips)


@check("length_penalty is the statement's, and each hypothesis's score is its summed log-prob divided by it", points=2,
       zh="length_penalty 符合题目的规定，每个假设的分数是它的 log-prob 之和除以它", depends="finished")
def test_length_penalty(submission, rng):
    style = "gnmt" if gnmt() else "divide"
    alpha = uniform(rng, 0.6, 1.5)
    for length in (1, randint(rng, 2, 9)):
        what = Text("length_penalty({length}, {alpha})", length=length, alpha=verbatim(f"{alpha:.4g}"))
        got = submission.length_penalty(length, alpha)
        other = penalty(length, alpha, "divide" if gnmt() else "gnmt")
        if is_number(got, float) and matches(got, other) and not matches(other, penalty(length, alpha, style)):
            fail("{what} returned {got:.4g}: that is the other length penalty; here it is {formula}.",
                 "{what} 返回了 {got:.4g}：这是另一种长度惩罚；这里是 {formula}。", what=what, got=got,
                 formula=verbatim(formula()), key="penalty-style")
        expect_number(got, penalty(length, alpha, style), what)

    def make(rng):
        case = case_of(rng, randint(rng, 5, 7), randint(rng, 4, 5), randint(rng, 3, 4), uniform(rng, 0.5, 2.0),
                       uniform(rng, 0.6, 1.5))
        slips = ("no-penalty", "penalty-multiplied", "penalty-style", "length-with-bos")
        others = ("eos-not-finished", "finished-no-slot", "live-dropped", "topk-per-beam", "not-accumulated")
        return case if apart(case, *slips) and differs(case, *others) else None

    expect_search(submission, designed(rng, make, "length penalty"), "no-penalty", "penalty-multiplied",
                  "penalty-style", "length-with-bos")


@check("at max_len every live beam ends and is returned; max_len = 1 too; a GPU at hand changes nothing", points=2,
       zh="到 max_len 时每个存活的 beam 都结束并被返回；max_len = 1 也一样；有 GPU 时也不变", depends="finished")
def test_max_len(submission, rng):
    slips = ("live-dropped", "no-penalty", "penalty-multiplied")

    def make(rng):  # EOS never chosen: every hypothesis is a live beam cut at max_len
        case = case_of(rng, randint(rng, 5, 7), randint(rng, 2, 4), randint(rng, 2, 4), -30.0, uniform(rng, 0.6, 1.5))
        return case if apart(case, *slips) and differs(case, "topk-per-beam", "not-accumulated") else None

    case = designed(rng, make, "max_len")
    expect_search(submission, case, *slips)

    def short(rng):  # one step: single tokens, EOS among the beams
        case = case_of(rng, randint(rng, 4, 6), 1, randint(rng, 2, 4), 2.0, uniform(rng, 0.6, 1.5))
        return case if any(seq == [case["eos"]] for seq, _ in search(**case)[0]) and apart(case, "live-dropped") \
            else None

    expect_search(submission, designed(rng, short, "max_len = 1"), "live-dropped")
    run = submission.probe(searched, case["tables"], case["bos"], case["eos"], case["beam_size"], case["max_len"],
                           case["alpha"], True, what="`beam_search`")  # a GPU at hand changes nothing
    fail_if_gpu(run["cuda"], "`beam_search(...)`")
    fail_if_gpu_anew(run["anew"], "`beam_search(...)`")
