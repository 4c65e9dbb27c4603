"""Heredocs as bash reads them, where tree-sitter-bash reads them differently.

Bash ends a heredoc only at a line that is the delimiter alone (after leading tabs for `<<-`).
Agents often write `EOF && python x.py` on the closing line; bash then keeps reading the body
(that line becomes file content, the command never runs) up to a later lone delimiter or the
end of input, while tree-sitter-bash ends the heredoc there and parses `python x.py` as a
command. Real runs show both versions one step apart (mini-swe-agent, sphinx-doc__sphinx-8551:
`EOF && python3 apply_fix.py` and then `EOF` + `python3 apply_fix.py`), and they do different
things, so the similarity must see what bash sees.
"""

from __future__ import annotations

import re

# a heredoc operator (not a here-string `<<<`) and its delimiter word, quoted or not
_START = re.compile(r"(?<!<)<<(-?)\s*(['\"]?)([A-Za-z_][\w.-]*)\2")
# marks a line that bash keeps in the body; removed again from parsed bodies (`clean_body`)
MARK = "\u2060"


def _early_end(line: str, delimiter: str) -> bool:
    """True when tree-sitter would end the heredoc at `line` but bash would not."""
    rest = line[len(delimiter) :]
    return line.startswith(delimiter) and rest.strip() != "" and rest[:1] in " \t&;|)"


def as_bash_reads(command: str) -> str:
    """The command with every line that bash keeps in a heredoc body marked so tree-sitter
    keeps it there too, and the delimiter appended where bash reads on to the end of input.
    Unchanged when no closing line carries anything after its delimiter."""
    if "<<" not in command:
        return command
    lines = command.split("\n")
    out: list[str] = []
    pending: list[tuple[str, bool]] = []  # delimiters whose bodies start on the next line
    changed = False
    for line in lines:
        if pending:
            delimiter, tabs = pending[0]
            check = line.lstrip("\t") if tabs else line
            if check == delimiter:
                pending.pop(0)
            elif _early_end(check, delimiter):
                line = MARK + line
                changed = True
            out.append(line)
            continue
        out.append(line)
        pending.extend((m.group(3), m.group(1) == "-") for m in _START.finditer(line))
    if not changed:
        return command
    out.extend(delimiter for delimiter, _ in pending)
    return "\n".join(out)


def clean_body(body: str) -> str:
    """A parsed heredoc body without the marks `as_bash_reads` added."""
    return body.replace(MARK, "")
