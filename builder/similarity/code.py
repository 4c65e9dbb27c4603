"""Code and written text as comparable keys: Python by its syntax tree, other text exactly.

Two `python -c` programs, heredoc scripts or edit contents are the same when they parse to
the same tree: quoting, spacing, line breaks vs `;` and comments do not count, but every
operator, string literal, name and indentation level does. Real near misses the old
bag-of-words comparison called equal, all different here: `open(f, "w+b")` vs `open(f, "w")`
(pytest-dev__pytest-5262), `print(srepr(1))` vs `print(srepr(Integer(1)))` (sympy-19346),
`class A: pass; print(str(A))` on one line (a NameError: the print is in the class body) vs
two lines (django-13401). Text that does not parse as Python is compared line by line with
trailing spaces and trailing blank lines set aside.
"""

from __future__ import annotations

import ast
import contextlib
import io
import re
import sys
import tokenize
from functools import lru_cache

from builder.similarity.c_tokens import C_SUFFIXES, c_token_key
from builder.similarity.heredocs import clean_body

_PY_SUFFIXES = (".py", ".pyi")
# JavaScript inserts a missing semicolon at a line end (automatic semicolon insertion): the
# same App.tsx edit with and without them is one change (OpenHands resolver run, pr-viewer#1)
_JS_SUFFIXES = (".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx")
# a shell word in an unquoted heredoc: `\\`, `\$`, `` \` `` lose their backslash, `\`+newline joins
_HEREDOC_ESCAPE = re.compile(r"\\([\\$`])|\\\n")


def text_key(text: str) -> str:
    """Text with trailing spaces of each line and trailing blank lines removed."""
    lines = [line.rstrip() for line in clean_body(text).split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines)


@lru_cache(maxsize=4096)
def python_key(code: str, scratch: bool = False) -> str:
    """The syntax tree of Python code (`ast:` ...), or its `text_key` when it does not parse.

    Imports of names the code never uses are left out: dropping an unused `import sys`
    changes nothing the program does (django-11451: the same file rewrite with and without it).
    `scratch` code (`python -c`, a script fed on stdin) is run for what it prints, so a
    print that shows values is reduced to those values: `print(a, b)` and
    `print(f"Called with {a}, {b}")` show the same thing (django-13590). A top-level print of
    text only is a label and goes (`_top_label`); elsewhere prints of constants keep their
    text, and code written into files is compared whole.
    """
    source = clean_body(code)
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        return (_syntax_error(source, exc) if scratch else None) or "text:" + text_key(source)
    except ValueError:
        return "text:" + text_key(source)
    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    used |= {_root(n) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    tree.body = [s for s in tree.body if not _unused_import(s, used, scratch)]
    if scratch:
        tree.body = [s for s in tree.body if not _top_label(s)]
        tree = _PrintValues().visit(tree)
    return "ast:" + ast.dump(tree, include_attributes=False)


def _top_label(statement: ast.stmt) -> bool:
    """A top-level print of text only (`print('Testing fields=[] ->')`, `print('ALL TESTS
    PASSED')`): it shows no value and only says the script got there, which the next
    statements' output or traceback says too. Inside a branch, loop or `try` it stays: there it
    tells which way the code went (`print('patched')` vs `print('pattern not found')`)."""
    if not isinstance(statement, ast.Expr) or not isinstance(statement.value, ast.Call):
        return False
    call = statement.value
    if not (isinstance(call.func, ast.Name) and call.func.id == "print") or call.keywords:
        return False
    texts = [a.values if isinstance(a, ast.JoinedStr) else [a] for a in call.args]
    return all(isinstance(part, ast.Constant) for parts in texts for part in parts)


class _PrintValues(ast.NodeTransformer):
    """`print(...)` calls reduced to the values they show, in order, when they show any."""

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if not (isinstance(node.func, ast.Name) and node.func.id == "print"):
            return node
        values: list[ast.expr] = []
        for arg in node.args:
            parts = arg.values if isinstance(arg, ast.JoinedStr) else [arg]
            for before, part in zip([None, *parts], parts, strict=False):
                if isinstance(part, ast.FormattedValue) and _shows_value(part, before):
                    values.append(part.value)
                elif not isinstance(part, ast.Constant):
                    values.append(part)
        if not values:
            return node
        return ast.Call(func=node.func, args=values, keywords=[])


def _syntax_error(source: str, exc: SyntaxError) -> str | None:
    """Code run for what it prints that does not parse prints only its SyntaxError: the
    message, the line number and that line up to the caret. Two such programs show the same
    thing when those agree (whitespace runs aside); the lines before it and what follows the
    caret never run. Django's `class C(models.TextChoices): A='a'` after a `;` in two
    one-liners that label the value differently (django-11964, a held-out pair of round 2);
    two scripts caught in the same heredoc trap whose `PY && python ...` line fails at the
    same line, though an if/else above it differs (astropy-12907, round 9's design split)."""
    lines = source.split("\n")
    if not exc.lineno or not exc.offset or exc.lineno > len(lines):
        return None
    shown = " ".join(lines[exc.lineno - 1][: exc.offset - 1].split())
    return f"syntax-error:{exc.msg}:{exc.lineno}:{shown}"


def _shows_value(part: ast.FormattedValue, before: ast.expr | None) -> bool:
    """`{x}` shows x; so does the self-documenting `{x=}` (a repr after the label `x=`, which
    Python writes as a constant ending in `=`): `print(S(0) == False)` and
    `print(f'{S(0) == False=}')` show the same comparison (sympy-20801). Other conversions
    and format specs change the text of the value (`{x!r}` of a str, `{x:.2f}`)."""
    if part.format_spec:
        return False
    if part.conversion == -1:
        return True
    labelled = isinstance(before, ast.Constant) and str(before.value).endswith("=")
    return part.conversion == ord("r") and labelled


def _root(node: ast.expr) -> str:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else ""


def _unused_import(stmt: ast.stmt, used: set[str], run: bool = False) -> bool:
    """A plain `import x` whose name is never used (`from x import y` is always kept). In code
    that is `run`, only the standard library's: importing anything else is itself a check
    that it is installed (`import numpy; print('ok')` vs `import mpmath; ...`, sympy-22080)."""
    if not isinstance(stmt, ast.Import):
        return False
    roots = [alias.name.split(".")[0] for alias in stmt.names]
    if run and not all(root in sys.stdlib_module_names for root in roots):
        return False
    return all((a.asname or root) not in used for a, root in zip(stmt.names, roots, strict=True))


def content_key(text: str, path: str | None = None) -> str:
    """The key of written content: a syntax tree for a Python file, tokens for C, else its
    text."""
    if path is not None and path.endswith(_PY_SUFFIXES):
        return python_key(text)
    return _c_key(text, path) or "text:" + text_key(text)


def _c_key(text: str, path: str | None) -> str | None:
    return c_token_key(clean_body(text)) if path and path.endswith(C_SUFFIXES) else None


def fragment_key(text: str, path: str | None = None) -> str:
    """A piece of a file (an edit's old or new text): for Python files its tokens, with
    string literals by value and comments dropped, so `'PixelData'` and `"PixelData"` agree
    while every operator, name and indentation level still counts; for JavaScript and
    TypeScript its lines without a closing semicolon; for C and C++ its tokens (`c_tokens`);
    else `text_key`."""
    if (key := _c_key(text, path)) is not None:
        return key
    if path is not None and path.endswith(_JS_SUFFIXES):
        lines = [line.rstrip().removesuffix(";").rstrip() for line in text.split("\n")]
        return "js:" + text_key("\n".join(lines))
    if path is None or not path.endswith(_PY_SUFFIXES):
        return "text:" + text_key(text)
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return "text:" + text_key(text)
    out = []
    for tok in tokens:
        if tok.type in (tokenize.COMMENT, tokenize.NL, tokenize.ENDMARKER):
            continue
        value = "" if tok.type in (tokenize.NEWLINE, tokenize.DEDENT) else tok.string
        if tok.type == tokenize.STRING:
            with contextlib.suppress(ValueError, SyntaxError):
                value = repr(ast.literal_eval(value))
        out.append(f"{tok.type}:{value}")
    while out and out[-1] in (f"{tokenize.NEWLINE}:", f"{tokenize.DEDENT}:"):
        out.pop()  # a trailing line break, and the dedents it closes
    return "tokens:" + "\x1f".join(out)


def heredoc_text(body: str, literal: bool) -> str:
    """A heredoc body as the command receives it: unquoted delimiters process backslashes
    (`$VAR` stays as written: its value is unknown here)."""
    return body if literal else _HEREDOC_ESCAPE.sub(lambda m: m.group(1) or "", body)
