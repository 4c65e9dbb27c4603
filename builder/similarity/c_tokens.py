"""C and C++ code as its token sequence: spacing between tokens is not part of the program.

A C compiler splits source into preprocessing tokens by maximal munch and then ignores the
white space between them (C11 5.1.1.2 phases 3 and 7), so `if(x)` and `if (x)` are one
program and an edit that differs only there is one change. The real pair: OpenHands'
CodeAct agent on ponyc-4588 replacing `return pattern_type;` in `src/libponyc/expr/match.c`
with `if(ast_id(pattern_type) == TK_ISO) ...` and with `if (ast_id(...` (round 6, design).

What still counts, because there white space is part of the program or of what a reader
sees: string and character literals (kept verbatim), preprocessor lines (`#define f(x)` and
`#define f (x)` declare different macros: the line is kept with its spaces collapsed, not
removed), comments (kept, spaces collapsed: a `//` comment runs to the line's end), and
token boundaries (`a - -b` is not `a--b`, `unsigned int` is not `unsignedint`). Text that
does not lex (an unclosed literal or comment) has no token key.
"""

from __future__ import annotations

import re

C_SUFFIXES = (".c", ".h", ".cc", ".cpp", ".cxx", ".hh", ".hpp", ".hxx", ".ino")

_TOKEN = re.compile(
    r"""
    (?P<space>[ \t\f\v\r]+|\\\n)
  | (?P<newline>\n)
  | (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<literal>(?:u8|[uUL])?(?:"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'))
  | (?P<number>\.?\d(?:[eEpP][+-]|[\w.])*)
  | (?P<word>[A-Za-z_]\w*)
  | (?P<punct>%:%:|\.\.\.|<<=|>>=|->|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||[*/%+\-&^|]=
        |\#\#|::|<:|:>|<%|%>|%:|[^\s\w])
    """,
    re.VERBOSE | re.DOTALL,
)
_PP_LINE = re.compile(r"^[ \t]*(?:#|%:)")


def c_token_key(text: str) -> str | None:
    """`c:` and the tokens of C/C++ source, or None when it does not lex."""
    out: list[str] = []
    for directive, run in _runs(text):
        if directive:
            out.append("pp:" + " ".join(run.split()))
            continue
        tokens = _tokens(run)
        if tokens is None:
            return None
        out.extend(tokens)
    return "c:" + "\x1f".join(out)


def _runs(text: str) -> list[tuple[bool, str]]:
    """(is a directive, text): preprocessor directives whole (continuations joined), and the
    code between them as one run each, since a comment or literal may span its lines."""
    runs: list[tuple[bool, str]] = []
    code: list[str] = []
    lines = iter(text.split("\n"))
    for line in lines:
        if _PP_LINE.match(line):
            if code:
                runs.append((False, "\n".join(code)))
                code = []
            while line.endswith("\\"):
                line = line[:-1] + " " + next(lines, "")
            runs.append((True, line))
        else:
            code.append(line)
    if code:
        runs.append((False, "\n".join(code)))
    return runs


def _tokens(code: str) -> list[str] | None:
    out = []
    position = 0
    while position < len(code):
        match = _TOKEN.match(code, position)
        if match is None:
            return None
        kind, value = match.lastgroup, match.group()
        if kind == "punct" and (value in "\"'" or code.startswith("/*", position)):
            return None  # an unclosed literal, or `/*` without its end
        position = match.end()
        if kind in ("space", "newline"):
            continue
        if kind == "comment":
            value = " ".join(value.split())
        out.append(value)
    return out
