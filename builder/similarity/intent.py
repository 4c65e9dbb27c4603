"""Intent classes of agent actions: what kind of thing a command does, not how it is spelled.

`cat f` and `nl -ba f | sed -n 1,40p` both *read*; `grep` and `rg` both *search*; `sed -i` and
`echo x > f` both *modify*. Intents in different groups (inspecting vs changing vs running)
are never "the same next action", which is why the semantic similarity caps on them.
"""

from __future__ import annotations

READ = "read"
SEARCH = "search"
MODIFY = "modify"
RUN = "run"
VCS = "vcs"
LIST = "list"
INFO = "info"
OUTPUT = "output"
SUBMIT = "submit"
INTENTS = (READ, SEARCH, MODIFY, RUN, VCS, LIST, INFO, OUTPUT, SUBMIT)

# intents in one group are neighbours (read vs search of a file), across groups they are not
GROUPS = {
    READ: "inspect",
    SEARCH: "inspect",
    LIST: "inspect",
    INFO: "inspect",
    MODIFY: "change",
    RUN: "execute",
    VCS: "vcs",
    OUTPUT: "output",
    SUBMIT: "submit",
}

SUBMIT_MARKERS = ("COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", "MINI_SWE_AGENT_FINAL_OUTPUT")
SUBMIT_TOOLS = frozenset({"submit", "finish", "Finish", "task_complete", "attempt_completion"})

PROGRAM_INTENTS: dict[str, str] = {
    **dict.fromkeys(
        ("cat", "nl", "head", "tail", "less", "more", "bat", "xxd", "hexdump", "od", "open"),
        READ,
    ),
    **dict.fromkeys(("goto", "scroll_up", "scroll_down", "view"), READ),
    **dict.fromkeys(
        ("grep", "rg", "ag", "ack", "locate", "search_dir", "search_file", "find_file"), SEARCH
    ),
    **dict.fromkeys(("ls", "tree", "dir", "du", "exa"), LIST),
    **dict.fromkeys(
        (
            "pwd",
            "whoami",
            "which",
            "whereis",
            "type",
            "printenv",
            "uname",
            "wc",
            "file",
            "stat",
            "date",
            "df",
            "ps",
            "id",
            "hostname",
            "nproc",
            "command",
        ),
        INFO,
    ),
    **dict.fromkeys(
        (
            "cp",
            "mv",
            "rm",
            "mkdir",
            "touch",
            "chmod",
            "ln",
            "patch",
            "tee",
            "truncate",
            "rmdir",
            "create",
            "edit",
            "insert",
            "append",
        ),
        MODIFY,
    ),
    **dict.fromkeys(("git", "hg", "svn"), VCS),
    **dict.fromkeys(("echo", "printf", "true", ":", "sleep", "clear"), OUTPUT),
    "submit": SUBMIT,
}

# modify sub-kinds: two modifications of a different kind are different actions
MODIFY_OPS = {
    "rm": "delete",
    "rmdir": "delete",
    "mv": "move",
    "cp": "copy",
    "mkdir": "mkdir",
    "touch": "touch",
    "chmod": "chmod",
    "ln": "link",
}
# commands that only set up the shell: dropped when the line has anything else in it
TRIVIAL = frozenset(
    {"cd", "pushd", "popd", "export", "set", "source", ".", "true", ":", "clear", "sleep", "unset"}
)
# commands that run another command: `timeout 60 python x.py` is `python x.py`
WRAPPERS = frozenset({"timeout", "sudo", "env", "time", "nohup", "nice", "stdbuf"})


def group(intent: str) -> str:
    """The group an intent belongs to."""
    return GROUPS.get(intent, intent)


def has_submit_marker(text: str) -> bool:
    """True when a command echoes one of the harness's submission sentinels."""
    return any(marker in text for marker in SUBMIT_MARKERS)


def program_intent(prog: str) -> str:
    """Default intent of a program; unknown programs run something."""
    return PROGRAM_INTENTS.get(prog, RUN)
