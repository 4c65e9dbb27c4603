"""Programs whose options are whole words after one dash, not bundles of letters.

getopt bundles (`ls -la` = `ls -l -a`) are the default reading of `-abc`, and for these
programs it is wrong twice over: `javac -classpath` would be seven letters, so it never
equals its alias `-cp` (round 12 design pair, jackson-dataformat-xml-544: `javac -cp X` vs
`javac -classpath X`, the same run), and `mvn -Dtest=ab` would equal `mvn -Dtest=ba` (the
same letters). Here every `-word` is one option, `-D<name>=<value>` included, and each
option's spellings are one name:
- javac (`javac --help`): `--class-path`, `-classpath`, `-cp`; `--source-path`,
  `-sourcepath`; `--module-path`, `-p`; `--processor-path`, `-processorpath`; `--source`,
  `-source`; `--target`, `-target`.
- java (`java --help`): `-cp`, `-classpath`, `--class-path`; `-p`, `--module-path`; `-m`,
  `--module`. Whatever follows the main class or `-jar <file>` is the program's own
  arguments, kept in order as positionals (`java -cp . T -v`: `-v` is T's).
- Maven, Gradle, Go, C compilers and CMake: single-dash words (`-DskipTests`, `-pl`,
  `-run`, `-Wall`, `-std=c11`), no aliases.
"""

from __future__ import annotations

_CLASS_PATH = {"-classpath": "-cp", "--class-path": "-cp"}
_JAVAC_ALIASES = {
    **_CLASS_PATH,
    "--source-path": "-sourcepath",
    "--module-path": "-p",
    "--processor-path": "-processorpath",
    "--source": "-source",
    "--target": "-target",
}
_JAVA_ALIASES = {**_CLASS_PATH, "--module-path": "-p", "--module": "-m"}

# per program: (options that take the next argument as value, spellings -> one name)
WORD_OPTIONS: dict[str, tuple[frozenset[str], dict[str, str]]] = {
    "javac": (
        frozenset({"-cp", "-sourcepath", "-p", "-processorpath", "-source", "-target",
                   "--release", "-d", "-s", "-h", "-encoding", "-processor"}),
        _JAVAC_ALIASES,
    ),
    "java": (frozenset({"-cp", "-p", "-m", "-jar"}), _JAVA_ALIASES),
    **dict.fromkeys(
        ("mvn", "mvnw", "gradle", "gradlew"),
        (frozenset({"-pl", "-f", "-P", "-T", "-s", "-rf", "-p", "-x"}), {}),
    ),
    "go": (frozenset({"-run", "-count", "-timeout", "-tags", "-o", "-p", "-bench"}), {}),
    **dict.fromkeys(
        ("gcc", "g++", "cc", "c++", "clang", "clang++"),
        (frozenset({"-o", "-I", "-L", "-l", "-x", "-include"}), {}),
    ),
    "cmake": (frozenset({"-S", "-B", "-G", "-C", "-T", "-A"}), {}),
}  # fmt: skip
_STOPS_AT_CLASS = frozenset({"java"})


def word_flags(prog: str, args: tuple[str, ...]) -> tuple[frozenset[str], tuple[str, ...]]:
    """(order-free options, positionals) of a program in `WORD_OPTIONS`; values as `-cp=X`."""
    values, aliases = WORD_OPTIONS[prog]
    flags: set[str] = set()
    positionals: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            positionals.extend(args[i:])
            break
        if not arg.startswith("-") or arg == "-":
            if prog in _STOPS_AT_CLASS:  # java's main class: the rest are its arguments
                positionals.extend(args[i - 1 :])
                break
            positionals.append(arg)
            continue
        name, eq, value = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        name = aliases.get(name, name)
        if not eq and name in values and i < len(args):
            value, eq, i = args[i], "=", i + 1
        flags.add(f"{name}={value}" if eq else name)
        if prog in _STOPS_AT_CLASS and name == "-jar":
            positionals.extend(args[i:])
            break
    return frozenset(flags), tuple(positionals)
