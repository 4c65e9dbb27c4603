"""A thin wrapper over tree-sitter-bash: is a command well-formed, and what simple commands is it.

Similarity and step eligibility both need the same view of a shell command: a flat list of
simple commands (name, unquoted arguments, redirects, heredoc body) grouped into pipelines, each
with the directory a preceding `cd X &&` moved into. Parses are cached per command string
because the same reference actions are compared against many candidates.
"""

from __future__ import annotations

import posixpath
import shlex
from dataclasses import dataclass, replace
from functools import cache, lru_cache

import tree_sitter_bash
from tree_sitter import Language, Node, Parser, Tree

NAVIGATION = frozenset({"cd", "pushd"})
_QUOTES = frozenset("'\"\\")
# statements whose children are themselves statements to walk in order
_CONTAINERS = frozenset(
    {
        "program",
        "compound_statement",
        "do_group",
        "if_statement",
        "elif_clause",
        "else_clause",
        "while_statement",
        "for_statement",
        "c_style_for_statement",
        "case_statement",
        "case_item",
        "function_definition",
        "negated_command",
    }
)


@dataclass(frozen=True, slots=True)
class Redirect:
    """One redirect: the operator (`>`, `>>`, `<`, `2>&1`, ...) and its unquoted target."""

    op: str
    target: str


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    """One command as the shell would run it; `cwd` is the `cd` target in force, if any."""

    name: str
    args: tuple[str, ...]
    redirects: tuple[Redirect, ...] = ()
    heredoc: str | None = None  # heredoc or here-string body fed to stdin
    cwd: str | None = None
    text: str = ""
    env: tuple[str, ...] = ()  # `NAME=value` assignments before the name (or after `export`)
    heredoc_literal: bool = True  # the heredoc's delimiter was quoted: no expansion in its body


@dataclass(frozen=True, slots=True)
class Pipeline:
    """Commands joined by `|`; a lone command is a pipeline of one. `on_failure`: it runs only
    when what precedes it fails (`make || rm -rf build`), the opposite of `&&` and `;`."""

    commands: tuple[SimpleCommand, ...]
    on_failure: bool = False


@dataclass(frozen=True, slots=True)
class Script:
    """A whole command line: its pipelines in execution order, and whether it parsed cleanly."""

    ok: bool
    pipelines: tuple[Pipeline, ...]
    cwd: str | None = None  # the `cd` target in force after the line (a kept shell stays there)

    @property
    def commands(self) -> tuple[SimpleCommand, ...]:
        return tuple(c for p in self.pipelines for c in p.commands)


@cache
def _parser() -> Parser:
    return Parser(Language(tree_sitter_bash.language()))


@lru_cache(maxsize=8192)
def parse_tree(command: str) -> Tree:
    """The tree-sitter syntax tree of a command (cached)."""
    return _parser().parse(command.encode("utf-8", errors="surrogatepass"))


def parses(command: str) -> bool:
    """True when the command is non-empty bash without syntax errors (step eligibility)."""
    if not command.strip():
        return False
    root = parse_tree(command).root_node
    return not root.has_error


def unquote(text: str) -> str:
    """The shell word as the program receives it: quotes and escapes removed, `$X` kept."""
    if not _QUOTES.intersection(text):
        return text
    try:
        parts = shlex.split(text, posix=True)
    except ValueError:
        return text.strip("'\"")
    return parts[0] if len(parts) == 1 else text


@lru_cache(maxsize=8192)
def parse_script(command: str, cwd: str | None = None) -> Script:
    """Split a command into pipelines of simple commands, resolving `cd` prefixes (cached);
    `cwd` is where the shell already is (a harness that keeps one shell across turns)."""
    root = parse_tree(command).root_node
    out: list[Pipeline] = []
    after = _walk(root, cwd, out)
    return Script(ok=not root.has_error and bool(command.strip()), pipelines=tuple(out), cwd=after)


def split_commands(command: str) -> tuple[SimpleCommand, ...]:
    """All simple commands of a command line, in order."""
    return parse_script(command).commands


def _walk(node: Node, cwd: str | None, out: list[Pipeline]) -> str | None:
    """Append the pipelines under `node`; return the cwd in force after it."""
    kind = node.type
    if kind == "list":
        return _walk_list(node, cwd, out)
    if kind in _CONTAINERS:
        for child in node.named_children:
            cwd = _walk(child, cwd, out)
        return cwd
    if kind == "subshell":
        for child in node.named_children:
            _walk(child, cwd, out)  # a cd inside ( ... ) does not leak out
        return cwd
    if kind == "redirected_statement":
        body = node.child_by_field_name("body")
        if body is not None and body.type not in ("pipeline", "command", "declaration_command"):
            return _walk_redirected(node, body, cwd, out)
    if kind in ("pipeline", "command", "redirected_statement", "declaration_command"):
        commands = _pipeline_commands(node, cwd)
        if commands:
            out.append(Pipeline(commands))
            if len(commands) == 1:
                return _after_cd(commands[0], cwd)
        return cwd
    return cwd


def _walk_list(node: Node, cwd: str | None, out: list[Pipeline]) -> str | None:
    """`a && b`, `a || b`: the right side of `||` is marked as run on failure."""
    failing = False
    for child in node.children:
        if not child.is_named:
            failing = child.type == "||"
            continue
        start = len(out)
        cwd = _walk(child, cwd, out)
        if failing:
            out[start:] = [replace(p, on_failure=True) for p in out[start:]]
    return cwd


def _walk_redirected(node: Node, body: Node, cwd: str | None, out: list[Pipeline]) -> str | None:
    """`cd x && cat <<EOF > f`: the redirects belong to the last command of the body."""
    inner: list[Pipeline] = []
    after = _walk(body, cwd, inner)
    if inner:
        redirects, heredoc = _redirects(node)
        last = inner[-1].commands[-1]
        patched = _with_redirects(last, redirects, heredoc, last.text)
        inner[-1] = Pipeline((*inner[-1].commands[:-1], patched))
    out.extend(inner)
    return after


def _pipeline_commands(node: Node, cwd: str | None) -> tuple[SimpleCommand, ...]:
    if node.type == "pipeline":
        parts: list[SimpleCommand] = []
        for child in node.named_children:
            parts.extend(_pipeline_commands(child, cwd))
        return tuple(parts)
    if node.type == "redirected_statement":
        body = node.child_by_field_name("body")
        redirects, heredoc = _redirects(node)
        if body is None:
            return ()
        inner = _pipeline_commands(body, cwd) if body.type != "subshell" else ()
        if not inner:
            return ()
        last = inner[-1]
        text = node.text.decode("utf-8", errors="replace") if node.text else last.text
        return (*inner[:-1], _with_redirects(last, redirects, heredoc, text))
    if node.type in ("command", "declaration_command"):
        return (_simple(node, cwd),)
    return ()


def _with_redirects(
    last: SimpleCommand, redirects: tuple[Redirect, ...], heredoc: Heredoc | None, text: str
) -> SimpleCommand:
    """`last` with the redirects (and heredoc) of the statement around it."""
    return replace(
        last,
        redirects=last.redirects + redirects,
        heredoc=heredoc[0] if heredoc is not None else last.heredoc,
        heredoc_literal=heredoc[1] if heredoc is not None else last.heredoc_literal,
        text=text,
    )


def _simple(node: Node, cwd: str | None) -> SimpleCommand:
    name = ""
    args: list[str] = []
    env: list[str] = []
    redirects: list[Redirect] = []
    heredoc: str | None = None
    if node.type == "declaration_command":
        name = node.children[0].type if node.children else ""
    for child in node.named_children:
        if child.type == "command_name":
            name = unquote(_text(child))
        elif child.type == "variable_assignment":
            env.append(_assignment(child))
        elif child.type == "herestring_redirect":
            heredoc = unquote(_text(child.named_children[-1])) if child.named_children else ""
        elif child.type == "file_redirect":
            redirects.append(_file_redirect(child))
        elif node.type == "command":
            args.append(unquote(_text(child)))
    return SimpleCommand(
        name=name,
        args=tuple(args),
        redirects=tuple(redirects),
        heredoc=heredoc,
        cwd=cwd,
        text=_text(node),
        env=tuple(env),
    )


def _assignment(node: Node) -> str:
    """`NAME=value` with the value unquoted as the shell would assign it."""
    name, _, value = _text(node).partition("=")
    return f"{name}={unquote(value)}"


Heredoc = tuple[str, bool]  # (body, literal: the delimiter was quoted)


def _redirects(node: Node) -> tuple[tuple[Redirect, ...], Heredoc | None]:
    redirects: list[Redirect] = []
    heredoc: Heredoc | None = None
    for child in node.children:
        if child.type == "file_redirect":
            redirects.append(_file_redirect(child))
        elif child.type == "heredoc_redirect":
            body = ""
            literal = True
            for part in child.named_children:
                if part.type == "heredoc_body":
                    body = _text(part)
                elif part.type == "heredoc_start":
                    literal = bool(_QUOTES.intersection(_text(part)))
                elif part.type == "file_redirect":
                    redirects.append(_file_redirect(part))
            heredoc = (body, literal)
        elif child.type == "herestring_redirect" and child.named_children:
            heredoc = (unquote(_text(child.named_children[-1])), True)
    return tuple(redirects), heredoc


def _file_redirect(node: Node) -> Redirect:
    op = "".join(_text(c) for c in node.children if not c.is_named or c.type == "file_descriptor")
    dest = node.child_by_field_name("destination")
    return Redirect(op=op, target=unquote(_text(dest)) if dest is not None else "")


def _after_cd(cmd: SimpleCommand, cwd: str | None) -> str | None:
    if cmd.name not in NAVIGATION:
        return cwd
    target = next((a for a in cmd.args if not a.startswith("-")), "~")
    if target.startswith(("~", "$")):
        return target
    if target.startswith("/") or cwd is None:
        return posixpath.normpath(target)
    return posixpath.normpath(posixpath.join(cwd, target))


def _text(node: Node) -> str:
    return node.text.decode("utf-8", errors="replace") if node.text else ""
