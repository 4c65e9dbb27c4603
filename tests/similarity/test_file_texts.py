"""Scripts the agent writes and then patches with its editor (`similarity.file_texts`)."""

from __future__ import annotations

from builder.ingest.formats.base import tool_call_action
from builder.similarity.file_texts import edited, refused_create


def _editor(**args: object):
    return tool_call_action("str_replace_editor", args)


def test_str_replace_and_insert_give_the_text_the_editor_writes() -> None:
    texts = {"t.py": "import os\nprint(os.sep)\n"}
    change = edited(texts, _editor(command="str_replace", path="/testbed/t.py",
                                   old_str="os.sep", new_str="os.name"))  # fmt: skip
    assert change == ("t.py", "import os\nprint(os.name)\n")
    change = edited(texts, _editor(command="insert", path="/testbed/t.py", insert_line=1,
                                   new_str="import sys"))  # fmt: skip
    assert change == ("t.py", "import os\nimport sys\nprint(os.sep)\n")


def test_a_refused_edit_changes_nothing_and_an_unknown_file_stays_unknown() -> None:
    texts = {"t.py": "x = 1\nx = 1\n"}
    twice = _editor(command="str_replace", path="t.py", old_str="x = 1", new_str="x = 2")
    assert edited(texts, twice) == ("t.py", texts["t.py"])  # old_str not unique: refused
    repo = _editor(command="str_replace", path="django/x.py", old_str="a", new_str="b")
    assert edited(texts, repo) == ("django/x.py", None)
    claude = tool_call_action("Edit", {"file_path": "/testbed/t.py", "old_string": "x = 1",
                                       "new_string": "x = 2", "replace_all": True})  # fmt: skip
    assert edited(texts, claude) == ("t.py", "x = 2\nx = 2\n")


def test_create_over_an_existing_file_writes_nothing() -> None:
    # django-11999 (round 7): "File already exists at: /testbed/test_fix.py. Cannot overwrite
    # files using command `create`." after which the agent ran the old text
    create = _editor(command="create", path="/testbed/test_fix.py", file_text="print(2)\n")
    assert refused_create({"test_fix.py": "print(1)\n"}, create, "")
    refusal = (
        "File already exists at: /testbed/test_fix.py. "
        "Cannot overwrite files using command `create`."
    )
    assert refused_create({}, create, refusal)
    assert not refused_create({}, create, "File created successfully at: /testbed/test_fix.py")
