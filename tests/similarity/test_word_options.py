"""Single-dash word options (`javac -classpath`, `mvn -DskipTests`) are one option each."""

from __future__ import annotations

import pytest

from builder.ingest.formats.base import shell_action
from builder.similarity.compare import semantic
from schemas.steps import Action


def sh(command: str) -> Action:
    return shell_action(command, command)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        # round 12 design pair (jackson-dataformat-xml-544): javac --help lists the three
        (
            "javac -cp .:jackson-annotations-2.13.3.jar:jackson-dataformat-xml-2.13.3.jar "
            "TestPojo.java",
            "javac -classpath .:jackson-annotations-2.13.3.jar:jackson-dataformat-xml-2.13.3.jar "
            "TestPojo.java",
        ),
        ("javac --class-path lib T.java -d out", "javac -d out -cp lib T.java"),
        ("java -classpath target/classes Main", "java --class-path target/classes Main"),
        ("mvn -q -DskipTests package", "mvn package -DskipTests -q"),
    ],
)
def test_spellings_of_one_option_are_the_same(a: str, b: str) -> None:
    assert semantic(sh(a), sh(b)) == 1.0


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("mvn test -Dtest=ab", "mvn test -Dtest=ba"),  # the same letters, other tests
        ("mvn -DskipTests package", "mvn -DskipTest package"),  # the second skips nothing
        ("javac -cp a.jar T.java", "javac -cp b.jar T.java"),
        ("java -cp . Main -v", "java -cp . -v Main"),  # T's own -v vs the JVM's
        ("java -jar app.jar a b", "java -jar app.jar b a"),
        ("go test -run TestA ./...", "go test -run TestB ./..."),
        ("gcc -O2 -o t t.c", "gcc -O0 -o t t.c"),
    ],
)
def test_other_words_or_values_are_other_runs(a: str, b: str) -> None:
    assert semantic(sh(a), sh(b)) == 0.0
