"""The text action grammars: fenced bash blocks, XML function calls, SWE-agent 0.x commands."""

from __future__ import annotations

import json

from builder.ingest.formats import grammars


def test_text_without_a_bash_block_has_no_action() -> None:
    assert grammars.bash_blocks("THOUGHT: nothing to run yet.\n```python\nprint(1)\n```") == []


def test_one_bash_block_is_one_shell_action() -> None:
    text = "THOUGHT: list.\n\n```bash\nls -la /testbed\n```"
    [action] = grammars.bash_blocks(text)
    assert action.tool == "bash"
    assert action.command == "ls -la /testbed"
    assert json.loads(action.arguments) == {"command": "ls -la /testbed"}
    assert action.raw == "```bash\nls -la /testbed\n```"


def test_two_bash_blocks_are_two_actions_in_order() -> None:
    text = "a\n```bash\necho one\n```\nthen\n```mswea_bash_command\ncat <<'EOF' > f\nx\nEOF\n```"
    actions = grammars.bash_blocks(text)
    assert [a.command for a in actions] == ["echo one", "cat <<'EOF' > f\nx\nEOF"]


def test_xml_call_with_multiline_parameter_keeps_inner_text() -> None:
    text = (
        "Let me edit.\n\n<function=str_replace_editor>\n"
        "<parameter=command>str_replace</parameter>\n"
        "<parameter=path>/testbed/a.py</parameter>\n<parameter=old_str>\n    x = 1\n"
        "    y = 2\n</parameter>\n<parameter=new_str>\n    x = 3\n</parameter>\n</function>"
    )
    [action] = grammars.xml_function_calls(text)
    assert action.tool == "str_replace_editor"
    assert action.command is None  # not a shell tool
    assert json.loads(action.arguments) == {
        "command": "str_replace",
        "path": "/testbed/a.py",
        "old_str": "    x = 1\n    y = 2",
        "new_str": "    x = 3",
    }
    assert action.raw.startswith("<function=str_replace_editor>")
    assert action.raw.endswith("</function>")


def test_xml_bash_call_lifts_the_command() -> None:
    text = (
        "<function=bash>\n<parameter=command>grep -rn 'freq' pandas | head</parameter>\n</function>"
    )
    [action] = grammars.xml_function_calls(text)
    assert (action.tool, action.command) == ("bash", "grep -rn 'freq' pandas | head")


def test_xml_call_cut_at_a_stop_sequence_still_parses() -> None:
    [action] = grammars.xml_function_calls(
        "<function=execute_bash>\n<parameter=command>pytest -q</parameter>\n"
    )
    assert (action.tool, action.command) == ("execute_bash", "pytest -q")


def test_xml_call_without_parameters() -> None:
    [action] = grammars.xml_function_calls("Done.\n\n<function=submit>\n</function>")
    assert (action.tool, json.loads(action.arguments), action.command) == ("submit", {}, None)


def test_swe_agent_edit_command_is_a_swe_agent_command() -> None:
    text = "Fix it.\n\n```\nedit 1:3\nimport os\n\nprint(os.sep)\nend_of_edit\n```"
    [action] = grammars.swe_agent_command(text)
    assert action.tool == grammars.SWE_AGENT_TOOL
    assert action.command == "edit 1:3\nimport os\n\nprint(os.sep)\nend_of_edit"
    assert json.loads(action.arguments) == {"command": action.command}


def test_swe_agent_plain_shell_command_counts_as_bash() -> None:
    [action] = grammars.swe_agent_command("Run it.\n```\npython reproduce.py\n```\n")
    assert (action.tool, action.command) == ("bash", "python reproduce.py")


def test_swe_agent_takes_the_last_block_and_keeps_nested_fences_in_the_edit() -> None:
    text = (
        "The issue shows:\n```python\nx = 1\n```\nNow edit:\n```\nedit 5:5\n"
        '"""Example:\n```python\nfoo()\n```\n"""\nend_of_edit\n```'
    )
    [action] = grammars.swe_agent_command(text)
    assert action.command == 'edit 5:5\n"""Example:\n```python\nfoo()\n```\n"""\nend_of_edit'


def test_swe_agent_text_without_a_block_has_no_action() -> None:
    assert grammars.swe_agent_command("I think we are done here.") == []
