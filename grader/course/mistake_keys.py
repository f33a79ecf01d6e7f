"""The registry of mistake keys: what each key a check can name means, in one line per language.

A check names the mistake it diagnosed with a short key (`fail(..., key="zero-grad-missing")`); the class page
counts students per key and shows its description. The keys the toolkit itself names (`wrong-shape`, `nan`,
`sign`, `raised-ValueError`...) are here in COMMON; an exercise's own keys are in a file beside its checks,
`checks/<exercise>.keys.toml`, one line a key:

    zero-grad-missing = ["the gradients are not zeroed before backward", "backward 之前没有把梯度清零"]

A key ending in `*` stands for every key it begins (`init-*` for `init-weight`, `init-bias`); a course in English
only may give one string. `grade validate` fails a registry that is not so written (`registry_problems`) and a
result whose key is registered nowhere (a typo would silently make a new category), and
`python -m grader.course.mistake_keys` prints the keys the check modules name that are not registered yet, as lines to
paste, each with a first draft of its description taken from the message it comes with.
"""

from __future__ import annotations

import ast
import fnmatch
import json
import re
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from grader.course.exercises import Exercise, all_exercises
from grader.text import Text, verbatim

COMMON = {  # keys the check toolkit, the sandbox and the judge name for every exercise
    "moved-to-gpu": Text("with a GPU pretended, the code sent tensors to it though every input is on the CPU",
                         "假装有 GPU 时，代码把 tensor 放到了 GPU 上，而所有输入都在 CPU 上"),
    "gpu-at-import": Text("imported with a GPU pretended, the code chose it at import and used it, though every input "
                          "is on the CPU", "导入时假装有 GPU，代码在导入时选定了它并用上了，而所有输入都在 CPU 上"),
    "returned-none": Text("the function returns None: a `return` is missing", "函数返回 None：少了 `return`"),
    "not-a-tensor": Text("the value is not a tensor", "返回值不是 tensor"),
    "not-a-number": Text("the value is not a Python number", "返回值不是 Python 数"),
    "wrong-shape": Text("the tensor has the wrong shape", "tensor 的形状不对"),
    "squeeze-without-dim": Text("a squeeze() without a dim removed a size-1 axis",
                                "不带 dim 的 squeeze() 去掉了大小为 1 的维度"),
    "size-1-dims": Text("only size-1 dimensions differ (keepdim, unsqueeze)",
                        "只有大小为 1 的维度不同（keepdim、unsqueeze）"),
    "wrong-dtype": Text("the tensor has the wrong dtype", "tensor 的 dtype 不对"),
    "no-requires-grad": Text("the tensor does not require grad", "tensor 没有 requires_grad"),
    "requires-grad": Text("the tensor requires grad where it should not", "tensor 不应该 requires_grad"),
    "nan": Text("NaN or inf in the values", "数值中有 NaN 或 inf"),
    "wrong-values": Text("wrong values, with no pattern recognised", "数值不对，看不出规律"),
    "sign": Text("the right size with the opposite sign", "大小对但符号相反"),
    "zero": Text("all zeros", "全是 0"),
    "transpose": Text("the transpose of the expected value", "是期望值的转置"),
    "factor-2": Text("off by a factor of 2", "差了 2 倍"),
    "factor-0.5": Text("off by a factor of 1/2", "差了 1/2 倍"),
    "factor-N": Text("off by a factor of the batch size N", "差了批大小 N 倍"),
    "factor-1/N": Text("off by a factor of 1/N (a mean where a sum belongs, or the reverse)",
                       "差了 1/N 倍（该求和的地方求了平均，或者反过来）"),
    "factor": Text("off by a constant factor", "差了一个常数因子"),
    "not-started": Text("not started: the function still raises NotImplementedError",
                        "尚未开始：函数仍然抛出 NotImplementedError"),
    "raised-*": Text("the learner's code raised this exception", "学生代码抛出了这个异常"),
    "learner-problem": Text("the learner's code did not produce a value", "学生代码没有产生结果"),
    "missing-name": Text("the file does not define a name the statement asks for", "文件没有定义题目要求的名字"),
    "unsendable-value": Text("the function returned a value that cannot be sent back", "函数返回的值无法传回"),
    "out-of-memory": Text("the code ran out of memory", "代码内存不足"),
    "timeout": Text("the code ran past its time limit", "代码超过了时间限制"),
    "crashed": Text("the code crashed its sandbox", "代码让沙箱崩溃了"),
    "tampered": Text("the code tampered with the grader", "代码篡改了评分器"),
    "load-failed": Text("the file could not be loaded", "文件无法加载"),
    "cell-raised": Text("a notebook cell raised an error", "notebook 的某个单元格抛出了错误"),
    "check-error": Text("the check could not finish with what the code returned", "代码返回的内容让检查无法完成"),
    "test-failed": Text("an assertion of an nbgrader test failed", "nbgrader 测试的断言没有通过"),
    "test-error": Text("an nbgrader test could not finish with what the code returned",
                       "代码返回的内容让 nbgrader 测试无法完成"),
    "not-judgeable": Text("an nbgrader test needs an answer only the learner's code can give",
                          "nbgrader 测试需要只有学生代码才能给出的回答"),
    "not-converted": Text("an nbgrader test the import could not convert: the teacher must rewrite it",
                          "导入时无法转换的 nbgrader 测试：需要老师改写"),
}


def registry_file(exercise: Exercise) -> Path:
    return exercise.checks.with_suffix(".keys.toml")


def read_registry(exercise: Exercise) -> tuple[dict[str, Text], list[Text]]:
    """The exercise's own keys with their descriptions, and what is wrong in its registry file (a key whose value is
    neither "text" nor ["English", "中文"] is left out, never shown as Python's repr of it)."""
    path = registry_file(exercise)
    if not path.is_file():
        return {}, []
    try:
        entries = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return {}, [Text("{file} cannot be read: {error}", "无法读取 {file}：{error}", file=path.name,
                         error=verbatim(str(exc)))]
    own: dict[str, Text] = {}
    problems = []
    for key, value in entries.items():
        if isinstance(value, str):
            own[key] = Text(value)
        elif isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) for v in value):
            own[key] = Text(*value)
        else:
            problems.append(Text("{file}: {key} = {value}: a description is [\"English\", \"中文\"] (or one string)",
                                 "{file}：{key} = {value}：描述应写成 [\"English\", \"中文\"]（或者一个字符串）",
                                 file=path.name, key=verbatim(key), value=verbatim(json.dumps(value, ensure_ascii=False,
                                                                                              default=str))))
    return own, problems


def registered(exercise: Exercise) -> dict[str, Text]:
    """Every key `exercise`'s checks may name: COMMON's and its own, with their descriptions."""
    return {**COMMON, **read_registry(exercise)[0]}


def registry_problems(exercise: Exercise) -> list[Text]:
    """What `grade validate` refuses in the exercise's registry file."""
    return read_registry(exercise)[1]


def describe(key: str, keys: dict[str, Text]) -> Text | None:
    """The description of `key` (an exact key, else the longest pattern `prefix*` it matches); None: unknown."""
    if key in keys:
        return keys[key]
    matches = [k for k in keys if "*" in k and fnmatch.fnmatchcase(key, k)]
    return keys[max(matches, key=len)] if matches else None


def named_keys(path: Path) -> dict[str, tuple[str, str]]:
    """The keys a checks module names as literals (`key="sign"`; `key=f"init-{attr}"` as `init-*`), each with
    the English and Chinese message it comes with where they are literals ("" otherwise)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError):
        return {}
    found: dict[str, tuple[str, str]] = {}
    for node in ast.walk(tree):
        for key in _assigned_keys(node) + _paired_keys(node):  # key = "x"; cause, key = Text(...), "x"
            found.setdefault(key, ("", ""))
        if not isinstance(node, ast.Call):
            continue
        if getattr(node.func, "id", "") == "CheckFailed" and len(node.args) > 1:  # CheckFailed(text, key)
            for key in _literal_keys(node.args[1]):
                found.setdefault(key, ("", ""))
        for keyword in node.keywords:
            for key in _literal_keys(keyword.value) if keyword.arg == "key" else []:
                if key not in found:
                    texts = [_literal(arg) for arg in node.args[:2]] + ["", ""]
                    found[key] = (texts[0], texts[1])
    return found


def _assigned_keys(node: ast.AST) -> list[str]:
    if not isinstance(node, ast.Assign) or len(node.targets) != 1:
        return []
    target, value = node.targets[0], node.value
    if isinstance(target, ast.Name) and target.id == "key":
        return _literal_keys(value)
    if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
        return [k for t, v in zip(target.elts, value.elts) if isinstance(t, ast.Name) and t.id == "key"
                for k in _literal_keys(v)]
    return []


def _paired_keys(node: ast.AST) -> list[str]:
    """Key-like strings (`graph-reused`: lower case, hyphenated) in a tuple or as a dict's values, as tables of
    diagnosed causes hold them (`(needle, "graph-reused", Text(...))`, `return "cuda", "cuda-hard-coded"`)."""
    if isinstance(node, ast.Dict):  # {"never stepped": "last-group-dropped", ...}; {"never-accept": (Text...), ...}
        elements = [v for v in node.values if v is not None]
        if node.values and all(isinstance(v, ast.Tuple) for v in node.values):  # a table keyed by key: (en, zh)
            elements += [k for k in node.keys if k is not None]
    elif isinstance(node, ast.Tuple):
        elements = node.elts
    else:
        return []
    return [key for e in elements if isinstance(e, (ast.Constant, ast.IfExp)) for key in _literal_keys(e)
            if re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)+", key)]


def _literal_keys(node: ast.expr) -> list[str]:
    """The keys an expression can be: a string, an f-string's literal start (as a pattern), either branch of
    `a if c else b`."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):  # f"init-{attr}" -> "init-*", f"{name}-not-seeded" -> "*-not-seeded"
        return ["".join(v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "*"
                        for v in node.values)]
    if isinstance(node, ast.IfExp):
        return _literal_keys(node.body) + _literal_keys(node.orelse)
    return []


def _literal(node: ast.expr) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _literal(node.left) + _literal(node.right)
    return ""


def unregistered(exercise: Exercise) -> dict[str, tuple[str, str]]:
    """The keys `exercise`'s checks module names that no registry describes, with their messages."""
    keys = registered(exercise)
    return {key: texts for key, texts in named_keys(exercise.checks).items()
            if describe(key, keys) is None and not any(fnmatch.fnmatchcase(k, key) for k in keys)}


def draft(message: str, stop: str) -> str:
    """A first draft of a key's description: the message's first clause, its fields as "…"."""
    text = re.sub(r"\{[^}]*\}", "…", message).strip()
    return re.split(stop, text)[0].strip(" .。:：") or text


def main(argv: list[str] | None = None) -> int:
    """Print the unregistered keys of every exercise (or those named) as lines for its registry file."""
    names = argv if argv is not None else sys.argv[1:]
    missing = 0
    for exercise in all_exercises():
        if names and exercise.id not in names and exercise.name not in names:
            continue
        keys = unregistered(exercise)
        if not keys:
            continue
        print(f"# {registry_file(exercise)}")
        for key, (en, zh) in sorted(keys.items()):
            description = [draft(en, r"[.:;?](?:\s|$)"), draft(zh, r"[。：；？]")]
            print(f"{json.dumps(key) if not re.fullmatch(r'[A-Za-z0-9_-]+', key) else key} = "
                  f"{json.dumps(description, ensure_ascii=False)}")
            missing += 1
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
