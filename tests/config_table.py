"""The README's table of config keys, generated from the config models' descriptions.

`python -m tests.config_table --write` rewrites it between the README's markers;
tests/config/test_describe.py checks that it is current.
"""

from __future__ import annotations

import argparse
import sys

from builder.config.describe import key_rows, keys_markdown
from tests.layout_map import REPO

BEGIN, END = "<!-- config-keys:begin -->", "<!-- config-keys:end -->"


def readme_with_table(readme: str) -> str:
    head, rest = readme.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{keys_markdown(key_rows())}\n{END}{tail}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--write", action="store_true", help="rewrite README.md's table")
    args = parser.parse_args()
    readme = REPO / "README.md"
    if args.write:
        readme.write_text(readme_with_table(readme.read_text(encoding="utf-8")), encoding="utf-8")
    else:
        print(keys_markdown(key_rows()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
