"""Archives (`.zip`, `.tar`, `.tar.gz`/`.tgz`, `.tar.zst`, `.tar.xz`, `.tar.bz2`) read member
by member, with every size bounded.

An archive is unpacked into a private temporary folder (its layout kept, so a sidecar such as
`report.json` still sits beside its trajectory), and each member is then read like any input
file under the name `archive!member`. Bounds: at most `MAX_MEMBERS` members and
`MAX_ARCHIVE_BYTES` unpacked in all, each member at most `MAX_MEMBER_BYTES`; a zip's declared
sizes are checked before anything is written, so a zip bomb is refused at once, and the bytes
actually written are counted too (a declared size can lie). Members that are links, devices,
encrypted, archives themselves, or not trajectory files are reported, never followed.
"""

from __future__ import annotations

import contextlib
import shutil
import stat
import tarfile
import tempfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO

from builder.errors import InputError
from builder.ingest.file_reading import MAX_INPUT_BYTES, compression, open_stream
from builder.ingest.names import safe_text

MAX_MEMBERS = 100_000
MAX_ARCHIVE_BYTES = MAX_INPUT_BYTES
MAX_MEMBER_BYTES = MAX_INPUT_BYTES
ZIP_SUFFIXES = (".zip",)
TAR_SUFFIXES = (".tar", ".tgz", ".tbz2", ".txz", ".tzst")
ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
COPY_CHUNK = 1 << 20


def archive_kind(path: Path) -> str | None:
    """ "zip", "tar" or None, from the name (`x.tar.gz`) or a zip's magic bytes."""
    name = path.name.lower()
    if name.endswith(ZIP_SUFFIXES):
        return "zip"
    if name.endswith(TAR_SUFFIXES) or (".tar." in name and compression(path) is not None):
        return "tar"
    try:
        with path.open("rb") as fh:
            magic = fh.read(4)
    except OSError:
        return None
    return "zip" if magic in ZIP_MAGIC else None


def is_archive_name(name: str) -> bool:
    """A name a directory walk picks up as an archive."""
    lower = name.lower()
    return lower.endswith(ZIP_SUFFIXES + TAR_SUFFIXES) or any(
        lower.endswith(f".tar{s}") for s in (".gz", ".zst", ".zstd", ".xz", ".bz2")
    )


@dataclass(frozen=True)
class Member:
    """A member written to `path`, or the reason it was not (`problem`)."""

    name: str  # inside the archive, as safe text
    path: Path | None = None
    problem: InputError | None = None


class _Budget:
    """Members and unpacked bytes of one archive so far, against the bounds."""

    def __init__(self, where: str) -> None:
        self.where, self.members, self.bytes = where, 0, 0

    def member(self) -> None:
        self.members += 1
        if self.members > MAX_MEMBERS:
            raise InputError(
                f"{self.where}: more than {MAX_MEMBERS:,} members: refused (archive bomb?); "
                "the members before were read",
                kind="archive_too_large",
            )

    def take(self, size: int) -> None:
        self.bytes += size
        if self.bytes > MAX_ARCHIVE_BYTES:
            raise InputError(
                f"{self.where}: more than {MAX_ARCHIVE_BYTES:,} bytes unpacked: refused "
                "(archive bomb?); the members before were read",
                kind="archive_too_large",
            )


def _too_large(where: str, name: str, size: int) -> InputError:
    return InputError(
        f"{where}!{name}: {size:,} bytes unpacked, more than {MAX_MEMBER_BYTES:,}: skipped",
        kind="archive_too_large",
    )


class _MemberTooLarge(Exception):
    pass


def _target(root: Path, name: str) -> Path | None:
    """Where a member goes under `root`: its relative path without `..` or a leading `/`."""
    parts = [p for p in PurePosixPath(name.replace("\\", "/")).parts if p not in ("/", "..", ".")]
    return root.joinpath(*parts) if parts else None


def _copy(source: IO[bytes], target: Path, budget: _Budget) -> None:
    """Write a member, counting its bytes against the bounds as they come."""
    target.parent.mkdir(parents=True, exist_ok=True)
    written = 0
    with target.open("wb") as out:
        while chunk := source.read(COPY_CHUNK):
            written += len(chunk)
            budget.take(len(chunk))
            if written > MAX_MEMBER_BYTES:
                raise _MemberTooLarge(written)
            out.write(chunk)


def _zip_members(path: Path, where: str, root: Path) -> Iterator[Member]:
    budget = _Budget(where)
    with zipfile.ZipFile(path) as archive:
        infos = archive.infolist()
        if len(infos) > MAX_MEMBERS:
            raise InputError(
                f"{where}: {len(infos):,} members, more than {MAX_MEMBERS:,}: refused "
                "(archive bomb?)",
                kind="archive_too_large",
            )
        declared = sum(info.file_size for info in infos)
        if declared > MAX_ARCHIVE_BYTES:
            raise InputError(
                f"{where}: members declare {declared:,} bytes unpacked, more than "
                f"{MAX_ARCHIVE_BYTES:,}: refused (zip bomb?)",
                kind="archive_too_large",
            )
        for info in infos:
            name = safe_text(info.filename)
            if info.is_dir():
                continue
            budget.member()
            mode = info.external_attr >> 16  # Unix mode, when the zip was made on Unix
            if stat.S_IFMT(mode) and not stat.S_ISREG(mode):
                yield Member(name, problem=_not_regular(where, name))
                continue
            target = _target(root, info.filename)
            if target is None:
                continue
            if info.file_size > MAX_MEMBER_BYTES:
                yield Member(name, problem=_too_large(where, name, info.file_size))
                continue
            try:
                with archive.open(info) as data:
                    _copy(data, target, budget)
            except _MemberTooLarge as exc:
                target.unlink(missing_ok=True)
                yield Member(name, problem=_too_large(where, name, exc.args[0]))
                continue
            except (
                zipfile.BadZipFile,
                RuntimeError,
                NotImplementedError,
                OSError,
                EOFError,
            ) as exc:
                target.unlink(missing_ok=True)
                yield Member(name, problem=_member_error(where, name, exc))
                continue
            yield Member(name, target)


def _tar_members(path: Path, where: str, root: Path) -> Iterator[Member]:
    budget = _Budget(where)
    with contextlib.ExitStack() as stack:
        stream = stack.enter_context(open_stream(path)) if compression(path) else None
        opened = tarfile.open(fileobj=stream, mode="r|") if stream else tarfile.open(path, "r|")  # noqa: SIM115
        archive = stack.enter_context(opened)
        for info in archive:
            name = safe_text(info.name)
            if info.isdir():
                continue
            budget.member()
            if not info.isreg():
                yield Member(name, problem=_not_regular(where, name))
                continue
            if info.size > MAX_MEMBER_BYTES:  # tar stores members whole: the size is true
                yield Member(name, problem=_too_large(where, name, info.size))
                continue
            target = _target(root, info.name)
            data = archive.extractfile(info)
            if target is None or data is None:
                continue
            _copy(data, target, budget)
            yield Member(name, target)


def _not_regular(where: str, name: str) -> InputError:
    return InputError(
        f"{where}!{name}: a link, device or other special member, not a regular file: skipped",
        kind="special_file",
    )


def _member_error(where: str, name: str, exc: Exception) -> InputError:
    text = str(exc)
    kind = "encrypted" if "encrypted" in text.lower() or "password" in text.lower() else "archive"
    return InputError(f"{where}!{name}: cannot be unpacked ({text})", kind=kind)


def archive_error(where: str, kind: str, exc: Exception) -> InputError:
    """The error for an archive that cannot be read at all (or stopped part way)."""
    if isinstance(exc, InputError):
        return exc
    return InputError(f"{where}: corrupt or unreadable {kind} archive ({exc})", kind="archive")


@contextlib.contextmanager
def unpacked(path: Path, kind: str, where: str) -> Iterator[Iterator[Member]]:
    """The members of the archive at `path`, written one by one under a temporary folder
    that is removed when the block ends."""
    root = Path(tempfile.mkdtemp(prefix="nap-unpack-"))
    try:
        members = _zip_members if kind == "zip" else _tar_members
        yield members(path, where, root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
