"""SWE-agent's `edit <start>:<end> ... end_of_edit`: the text is the command's input, and a
malformed range is refused before the text is read."""

from __future__ import annotations

from builder.ingest.formats.base import shell_action
from builder.similarity.compare import semantic
from builder.similarity.swe_commands import swe_edit_call
from schemas.steps import Action


def sh(command: str) -> Action:
    return shell_action(command, command)


def edit(first_line: str, text: str) -> str:
    return f"{first_line}\n{text}\nend_of_edit"


def test_the_range_is_read_from_the_first_argument_only() -> None:
    assert swe_edit_call(edit("edit 40:62", "  x = 1")) == (40, 62, "  x = 1")
    assert swe_edit_call(edit("edit 40:62 extra", "  x = 1")) == (40, 62, "  x = 1")
    assert swe_edit_call(edit("edit pom.xml 40:62", "<a/>")) == "usage"
    assert swe_edit_call(edit("edit 40", "<a/>")) == "usage"
    assert swe_edit_call(edit("edit", "<a/>")) == "usage"
    assert swe_edit_call(edit("edit a:5", "<a/>")) == "usage: start_line must be a number"
    assert swe_edit_call(edit("edit 5:b", "<a/>")) == "usage: end_line must be a number"
    assert swe_edit_call("edit 3:4\n") is None  # no end_of_edit: not an edit call
    assert swe_edit_call("ls\nend_of_edit") is None


def test_a_comment_on_the_first_line_leaves_the_text_to_bash() -> None:
    assert swe_edit_call(edit("edit pom.xml  # the build file", "<a/>")) is None
    # bash then refuses the text's first line, as the logged run shows
    a = sh(edit("edit pom.xml  # the build file", "<properties>\n  <x>1</x>"))
    b = sh(edit("edit pom.xml  # the build file", "<dependencies>\n  <y>2</y>"))
    assert semantic(a, b) == 0.0  # bash prints the refused line, and they differ


def test_two_refused_edits_print_the_same_usage_whatever_their_text() -> None:
    a = sh(edit("edit pom.xml 40:62", "<dependency>\n  <version>2.15.0</version>\n</dependency>"))
    b = sh(edit("edit pom.xml 7:17", "  <dependencies>\n  </dependencies>"))
    assert semantic(a, b) == 1.0
    assert semantic(a, sh(edit("edit a:5", "<dependency/>"))) == 0.0  # another message
    assert semantic(a, sh(edit("edit 7:17", "  <dependencies>\n  </dependencies>"))) == 0.0


def test_edits_that_apply_are_compared_by_range_and_text() -> None:
    assert semantic(sh(edit("edit 40:62", "  x = 1")), sh(edit("edit 40:62 ", "  x = 1"))) == 1.0
    assert semantic(sh(edit("edit 40:62", "  x = 1")), sh(edit("edit 40:62", "  x = 2"))) == 0.0
    assert semantic(sh(edit("edit 40:62", "  x = 1")), sh(edit("edit 40:61", "  x = 1"))) == 0.0
