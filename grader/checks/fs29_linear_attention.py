"""Hidden checks of fs29: linear attention with a feature map, causal by cumulative sums, and its recurrent step.

The expectation is the quadratic form, computed here in float64 from torch's own F.elu / F.relu: A = phi(q) phi(k)^T
(lower-triangular when causal), out = A v / (A.sum(-1) + eps); it equals the linear form exactly, so any correct
order of the sums passes. Each known slip is written out here too: another feature map (ReLU, elu without the +1,
none), the causal sums excluding the current key, a denominator over every key in the causal case, no denominator,
the feature map applied to v; for the step, the output read before the current key is added. Values are drawn so
that each differs from the right answer on every seed (queries and keys with negative entries, Tq != Tk).

Kata variants: `variant("feature")` is the feature map, elu(x) + 1 or relu(x); with ReLU a query whose features are
all negative has a zero denominator, and eps must keep its output 0, never NaN.
"""

import torch
import torch.nn.functional as F

from grader.checking import Text, check, expect_close, expect_tensor, fail, matches, variant
from grader.devices import expect_cpu_only

# -- judge side ------------------------------------------------------------------------------------


def randint(rng, low: int, high: int) -> int:
    return int(torch.randint(low, high + 1, (1,), generator=rng))


def is_relu() -> bool:
    return variant("feature")["name"] == "relu"


def phi(x):
    return F.relu(x) if is_relu() else F.elu(x) + 1


MAPS = {"elu+1": lambda x: F.elu(x) + 1, "relu": F.relu, "elu": F.elu, "identity": lambda x: x,
        "exp": torch.exp}


def quadratic(q, k, v, causal=False, eps=1e-6, fmap=None, exclusive=False, global_den=False, normalise=True,
              on_v=False):
    """Linear attention as its quadratic form, in float64, with one slip at a time."""
    fmap = fmap or phi
    q, k, v = q.double(), k.double(), v.double()
    a = fmap(q) @ fmap(k).transpose(-2, -1)
    full = a
    if causal:
        a = a.tril(-1) if exclusive else a.tril()
    values = fmap(v) if on_v else v
    if not normalise:
        return a @ values
    den = (full if global_den else a).sum(-1, keepdim=True)
    return (a @ values) / (den + eps)


def map_slips(q, k, v, causal=False) -> list:
    names = ["elu+1", "elu", "identity", "exp"] if is_relu() else ["relu", "elu", "identity", "exp"]
    slips = []
    for name in names:
        slips.append((quadratic(q, k, v, causal, fmap=MAPS[name]), Text(
            "it matches the feature map {got} instead of {want}: phi goes on q and k, as the statement defines it.",
            "它与特征映射 {got} 一致，而不是 {want}：phi 按题目的定义作用于 q 和 k。", got=name,
            want="relu" if is_relu() else "elu+1"), "wrong-feature-map"))
    slips.append((quadratic(q, k, v, causal, on_v=True), Text(
        "it matches the feature map applied to v too: phi goes on the queries and keys only; the values stay as they are.",
        "它与把特征映射也用在 v 上的结果一致：phi 只作用于查询和键；值保持不变。"), "feature-on-v"))
    slips.append((quadratic(q, k, v, causal, normalise=False), Text(
        "it matches the numerator alone, phi(q) S: divide by phi(q) . z + eps, the sum of the weights, as softmax "
        "divides by its sum.", "它与只有分子 phi(q) S 的结果一致：还要除以权重之和 phi(q) . z + eps，就像 softmax 除以它的和。"),
        "no-normaliser"))
    return slips


def causal_slips(q, k, v) -> list:
    return [
        (quadratic(q, k, v, True, exclusive=True), Text(
            "it matches sums over keys 0..i-1: the current key is left out (an exclusive cumulative sum, or the state "
            "read before it is updated). Query i attends keys 0..i, itself included.",
            "它与对键 0..i-1 求和的结果一致：漏掉了当前的键（不含当前项的累积和，或在更新之前就读取了状态）。"
            "查询 i 关注键 0..i，包括它自己。"), "exclusive-sum"),
        (quadratic(q, k, v, True, global_den=True), Text(
            "it matches a causal numerator over a denominator summed over every key: z must be cumulative too, "
            "z_i = sum of phi(k_j) for j <= i.",
            "它与分子是因果的、而分母对所有键求和的结果一致：z 也必须是累积的，z_i = 对 j <= i 的 phi(k_j) 求和。"),
         "global-denominator"),
        (quadratic(q, k, v, False), Text(
            "it matches attention over every key: causal=True must restrict the sums to keys 0..i (cumulative sums "
            "over time).", "它与关注所有键的结果一致：causal=True 时求和必须限制在键 0..i（沿时间的累积和）。"),
         "causal-ignored"),
    ]


def first_wrong(got, want, rtol, atol) -> dict:
    bad = ~torch.isclose(got.double(), want.double(), rtol=rtol, atol=atol, equal_nan=True)
    idx = tuple(int(i) for i in bad.nonzero()[0])
    return {"at": list(idx), "got": float(got[idx]), "want": float(want[idx])}


def expect_named(got, want, what, slips, rtol=1e-5, atol=1e-7):
    if matches(got, want, rtol=rtol, atol=atol, equal_nan=True):
        return
    for wrong, why, key in slips:
        if not matches(wrong, want, rtol=rtol, atol=atol, equal_nan=True) and matches(
                got, wrong, rtol=rtol, atol=atol, equal_nan=True):
            fail(Text("{what}{at} should be {want:.5g}, got {got:.5g}: {why}", "{what}{at} 应为 {want:.5g}，实际为 "
                      "{got:.5g}：{why}", what=what, why=why, **first_wrong(got, want, rtol, atol)), key=key)
    if torch.isnan(got.double()).any() and not torch.isnan(want).any():
        fail("{what} contains NaN (first at {at}): a query with no positive feature has phi(q) . z = 0, and 0 / 0 is "
             "NaN. Add eps to the denominator: (phi(q) . z + eps).",
             "{what} 含有 NaN（第一个在 {at}）：没有正特征的查询 phi(q) . z = 0，0 / 0 是 NaN。请把 eps 加到分母上："
             "(phi(q) . z + eps)。", what=what, at=[int(i) for i in torch.isnan(got.double()).nonzero()[0]],
             key="zero-denominator")
    expect_close(got, want, what, rtol=rtol, atol=atol)


def qkv(rng, b, h, tq, tk, d, dv):
    def draw(*shape):
        return torch.randn(*shape, generator=rng, dtype=torch.float64)
    q, k, v = draw(b, h, tq, d), draw(b, h, tk, d), draw(b, h, tk, dv)
    if is_relu():
        q[0, 0, 0] = -q[0, 0, 0].abs() - 0.1  # a query with no positive feature: a zero denominator
    return q, k, v


# -- the checks -------------------------------------------------------------------------------------

@check("the functions return the statement's shapes", points=1, zh="各函数返回题目规定的形状")
def test_shapes(submission, rng):
    x = torch.randn(2, 3, generator=rng)
    expect_tensor(submission.feature_map(x), "feature_map(x[2, 3])", shape=[2, 3], floating=True)
    q, k, v = qkv(rng, 2, 2, 3, 5, 4, 6)
    expect_tensor(submission.linear_attention(q, k, v), "linear_attention(q[2, 2, 3, 4], k[2, 2, 5, 4], v[2, 2, 5, 6])",
                  shape=[2, 2, 3, 6], floating=True)
    out = submission.linear_attention_step(q[:, :, 0], k[:, :, 0], v[:, :, 0])
    if not isinstance(out, (tuple, list)) or len(out) != 2 or not isinstance(out[1], (tuple, list)) or len(out[1]) != 2:
        fail("linear_attention_step should return (out_t, (S, z)).", "linear_attention_step 应返回 (out_t, (S, z))。",
             key="wrong-shape")
    expect_tensor(out[0], "linear_attention_step(...)[0] (out_t)", shape=[2, 2, 6], floating=True)
    expect_tensor(out[1][0], Text("the state S", "状态 S"), shape=[2, 2, 4, 6], floating=True)
    expect_tensor(out[1][1], Text("the state z", "状态 z"), shape=[2, 2, 4], floating=True)


@check("feature_map is the statement's phi", points=1, zh="feature_map 就是题目的 phi", depends="shapes")
def test_feature(submission, rng):
    x = torch.randn(3, 5, generator=rng, dtype=torch.float64) * 3
    got = expect_tensor(submission.feature_map(x), "feature_map(x[3, 5])", shape=[3, 5], floating=True)
    names = ["elu+1", "elu", "identity", "exp"] if is_relu() else ["relu", "elu", "identity", "exp"]
    slips = [(MAPS[n](x), Text("it matches {n}: the feature map here is {want}.", "它与 {n} 一致：这里的特征映射是 {want}。",
                               n=n, want="relu(x)" if is_relu() else "elu(x) + 1"), "wrong-feature-map") for n in names]
    expect_named(got, phi(x), "feature_map(x[3, 5])", slips)


@check("linear_attention matches its quadratic form, Tq != Tk", points=2, zh="linear_attention 与其平方形式一致（Tq != Tk）",
       depends="shapes")
def test_full(submission, rng):
    for b, h, tq, tk in ((2, 2, randint(rng, 2, 4), randint(rng, 5, 7)), (1, 1, 1, 1)):
        q, k, v = qkv(rng, b, h, tq, tk, 4, 3)
        what = f"linear_attention(q{list(q.shape)}, k{list(k.shape)}, v{list(v.shape)})"
        got = expect_tensor(submission.linear_attention(q, k, v), what, shape=[b, h, tq, 3], floating=True)
        expect_named(got, quadratic(q, k, v), what, map_slips(q, k, v))
    what = f"linear_attention(q{list(q.shape)}, k, v, eps=0.5)"
    got = expect_tensor(submission.linear_attention(q, k, v, eps=0.5), what, shape=list(q.shape[:3]) + [3], floating=True)
    expect_named(got, quadratic(q, k, v, eps=0.5), what, [(quadratic(q, k, v, eps=-0.5), Text(
        "it matches phi(q) . z - eps in the denominator: eps is added, phi(q) . z + eps.",
        "它与分母为 phi(q) . z - eps 的结果一致：eps 是加上去的，phi(q) . z + eps。"), "eps-sign")])


@check("causal=True sums over keys 0..i, the current key included", points=2,
       zh="causal=True 时对键 0..i 求和，包括当前的键", depends="full")
def test_causal(submission, rng):
    for t in (randint(rng, 4, 7), 1):
        q, k, v = qkv(rng, 2, 2, t, t, 4, 3)
        what = f"linear_attention(q{list(q.shape)}, k, v, causal=True)"
        got = expect_tensor(submission.linear_attention(q, k, v, True), what, shape=[2, 2, t, 3], floating=True)
        expect_named(got, quadratic(q, k, v, True), what, causal_slips(q, k, v) + map_slips(q, k, v, True)
                     if t > 1 else [])
    expect_cpu_only(submission, [("linear_attention", [q.float(), k.float(), v.float(), True])])


@check("linear_attention_step, run over the sequence, gives the causal outputs and the sums as its state", points=2,
       zh="逐步运行 linear_attention_step 得到因果输出，状态就是这些和", depends="causal")
def test_step(submission, rng):
    t = randint(rng, 3, 5)
    q, k, v = qkv(rng, 1, 2, t, t, 4, 1)  # B = 1 and Dv = 1: a squeeze() without a dim shows
    eps = [1e-6, 0.5][randint(rng, 0, 1)]
    want = quadratic(q, k, v, True, eps=eps)
    state, outs = None, []
    for i in range(t):
        what = Text("linear_attention_step at step {i} (eps={eps})", "第 {i} 步的 linear_attention_step（eps={eps}）",
                    i=i, eps=eps)
        value, after = submission.call_with_args("linear_attention_step", q[:, :, i], k[:, :, i], v[:, :, i], state,
                                                 eps)
        if not isinstance(value, (tuple, list)) or len(value) != 2 or not isinstance(value[1], (tuple, list)):
            fail("{what} should return (out_t, (S, z)).", "{what} 应返回 (out_t, (S, z))。", what=what, key="wrong-shape")
        if state is not None and not all(torch.equal(torch.as_tensor(a), torch.as_tensor(b))
                                         for a, b in zip(after[3], state)):
            fail("{what} changed the state it was given (an in-place +=): the caller may still need the old state "
                 "(to branch, or to retry a step). Return a new state: S = S + ..., z = z + ....",
                 "{what} 修改了传入的状态（原地的 +=）：调用者可能还需要旧的状态（用于分支或重试某一步）。"
                 "请返回新的状态：S = S + ...，z = z + ...。", what=what, key="state-in-place")
        outs.append(expect_tensor(value[0], what, shape=[1, 2, 1], floating=True))
        state = value[1]
    got = torch.stack(outs, dim=2)
    what = Text("the outputs of linear_attention_step over {t} steps", "linear_attention_step 运行 {t} 步的输出", t=t)
    stale = quadratic(q, k, v, True, eps=eps, exclusive=True)
    expect_named(got, want, what, [(stale,) + tuple(causal_slips(q, k, v)[0][1:])])
    fk = phi(k)
    expect_close(torch.as_tensor(state[0]).double(), (fk.unsqueeze(-1) * v.unsqueeze(-2)).sum(2),
                 Text("the state S after {t} steps", "{t} 步之后的状态 S", t=t))
    expect_close(torch.as_tensor(state[1]).double(), fk.sum(2), Text("the state z after {t} steps", "{t} 步之后的状态 z",
                                                                      t=t))
    expect_cpu_only(submission, [("linear_attention_step", [q[:, :, 0].float(), k[:, :, 0].float(),
                                                            v[:, :, 0].float()])])
