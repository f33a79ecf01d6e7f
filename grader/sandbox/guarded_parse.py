"""Parse a learner's code on the trusted side, where it is hostile input: the one way the grader's own processes
read its syntax (equal code, similarity, the same-code check of a kata, the scan for banned routes, a notebook's
check cells).

Python's parser recurses with the nesting of what it reads: 200 000 minus signs make it raise MemoryError or
RecursionError (and an older Python could overflow its C stack), and a deep tree makes every recursive walker
(`ast.dump`, a NodeTransformer) raise RecursionError later. So code is refused before it is parsed when it is
larger than MAX_CODE, has a line longer than MAX_LINE or a statement of more than MAX_TOKENS tokens (counted by
the standard library's tokenize, which does not recurse), and after, when its tree is deeper than MAX_DEPTH.
`parse` never raises: it returns the tree or why there is none. Never imports torch.
"""

from __future__ import annotations

import ast
import io
import tokenize
from dataclasses import dataclass

from grader.text import Text, verbatim

MAX_CODE = 1 << 18  # characters of one file or cell: far more than any exercise's answer (parsing one costs ~3 s)
MAX_LINE = 20_000  # characters of one line
MAX_TOKENS = 10_000  # tokens of one statement: the parser's recursion stays far from any stack's end
MAX_DEPTH = 100  # levels of the tree: a recursive walker needs a few frames a level, the limit is 1000
SKIPPED = (tokenize.COMMENT, tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING)


@dataclass(frozen=True)
class Unparsed:
    """Why there is no tree: `refused` when the trusted side would not read the code (too large, too deep), else
    the learner's own syntax error, which the grading reports."""

    reason: Text
    refused: bool


def parse(code: str) -> ast.Module | Unparsed:
    """The syntax tree of `code`, or why there is none."""
    if len(code) > MAX_CODE:
        return Unparsed(Text("longer than {n} characters", "长于 {n} 个字符", n=MAX_CODE), True)
    long_line = next((n for n, line in enumerate(code.splitlines(), 1) if len(line) > MAX_LINE), None)
    if long_line is not None:
        return Unparsed(Text("line {line} is longer than {n} characters", "第 {line} 行长于 {n} 个字符",
                             line=long_line, n=MAX_LINE), True)
    crowded = _crowded_statement(code)
    if crowded is not None:
        return Unparsed(Text("the statement at line {line} has more than {n} tokens",
                             "第 {line} 行的语句超过 {n} 个词法单元", line=crowded, n=MAX_TOKENS), True)
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        return Unparsed(Text("does not parse: {error} (line {line})", "无法解析：{error}（第 {line} 行）",
                             error=verbatim(str(exc.msg)[:100]), line=exc.lineno or 1), False)
    except ValueError as exc:  # a NUL byte
        return Unparsed(Text("does not parse: {error}", "无法解析：{error}", error=verbatim(str(exc)[:100])), False)
    except (RecursionError, MemoryError):
        return Unparsed(Text("nested too deeply for Python's parser", "嵌套太深，Python 的解析器无法读取"), True)
    if _deeper_than(tree, MAX_DEPTH):
        return Unparsed(Text("nested more than {n} levels deep", "嵌套超过 {n} 层", n=MAX_DEPTH), True)
    return tree


def _crowded_statement(code: str) -> int | None:
    """The first line of the first statement of more than MAX_TOKENS tokens, if any. Code that does not tokenize
    is left to the parser, which says why."""
    count, first = 0, 1
    try:
        for tok in tokenize.generate_tokens(io.StringIO(code).readline):
            if tok.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
                count = 0
            elif tok.type not in SKIPPED:
                first = tok.start[0] if count == 0 else first
                count += 1
                if count > MAX_TOKENS:
                    return first
    except (tokenize.TokenError, SyntaxError):
        pass
    return None


def _deeper_than(tree: ast.AST, limit: int) -> bool:
    """Whether `tree` has more than `limit` levels (walked without recursion)."""
    stack = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return False
