"""Assemble the view: one HTML file with the style, the script and the data inline.

No server, no CDN: the page opens from disk offline. The data is JSON in a
`<script type="application/json">` element with every `<` escaped, so no text of a
trajectory can close the element or run as markup.
"""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path
from typing import Any

from builder.errors import InputError
from builder.report.build import _write_atomic
from builder.teacher.render import CODE_MARKER, PLAIN_MARKER
from builder.view.data import build_steps

DEFAULT_NAME = "view.html"
PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>nap-builder view: {title}</title>
<style>
{css}
</style>
</head>
<body>
<header><h1>nap-builder view</h1><span class="meta" id="title-meta"></span></header>
<div id="filters"></div>
<main><div id="list"></div><div id="detail"></div></main>
<script type="application/json" id="nap-meta">{meta}</script>
<script type="application/json" id="nap-data">{data}</script>
<script>
{js}
</script>
</body>
</html>
"""


def embedded_json(value: Any) -> str:
    """JSON safe inside a script element: `<` (and so `</script>`, `<!--`) is escaped."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c")


def _asset(name: str) -> str:
    return files("builder.view").joinpath("assets", name).read_text(encoding="utf-8")


def render_page(steps: list[dict[str, Any]], out_label: str) -> str:
    """The whole HTML page for these steps."""
    meta = {"out": out_label, "code_marker": CODE_MARKER, "plain_marker": PLAIN_MARKER}
    escaped_title = out_label.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return PAGE.format(
        title=escaped_title,
        css=_asset("view.css"),
        meta=embedded_json(meta),
        data=embedded_json(steps),
        js=_asset("view.js"),
    )


def write_view(out_dir: Path, to: Path | None = None) -> tuple[Path, int]:
    """Write the view of run folder `out_dir` (default OUT/view.html); returns (path, steps)."""
    out_dir = Path(out_dir)
    if not (out_dir / "steps").is_dir():
        raise InputError(f"{out_dir}: no steps/ table here; give a `nap-builder run` output folder")
    steps = build_steps(out_dir)
    path = Path(to) if to is not None else out_dir / DEFAULT_NAME
    _write_atomic(path, render_page(steps, out_dir.name or str(out_dir)))
    return path, len(steps)
