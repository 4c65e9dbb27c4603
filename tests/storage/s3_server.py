"""A real S3 API on 127.0.0.1 (moto's server) for the object-store tests, with dummy
credentials and the endpoint given to pyarrow through the environment, as a user would."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from pyarrow import fs as pafs

moto_server = pytest.importorskip("moto.server")
SECRET = "nap-dummy-s3-secret-k3y"  # searched for in logs: it must never appear


@contextmanager
def s3_server(monkeypatch: pytest.MonkeyPatch, *buckets: str) -> Iterator[pafs.S3FileSystem]:
    """A running moto S3 server with these buckets; yields a pyarrow client for checks."""
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": SECRET,
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": endpoint,
    }.items():
        monkeypatch.setenv(name, value)
    client = pafs.S3FileSystem(
        endpoint_override=endpoint, scheme="http", allow_bucket_creation=True
    )
    for bucket in buckets:
        client.create_dir(bucket)
    try:
        yield client
    finally:
        server.stop()


def upload_folder(client: pafs.FileSystem, folder: Path, prefix: str) -> None:
    """Copy a local folder's files under `prefix` (bucket/key...) on the store."""
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            key = f"{prefix}/{path.relative_to(folder).as_posix()}"
            with client.open_output_stream(key) as out:
                out.write(path.read_bytes())


def store_files(client: pafs.FileSystem, prefix: str) -> list[str]:
    """Every object's key under `prefix`, relative to it, sorted."""
    infos = client.get_file_info(pafs.FileSelector(prefix, recursive=True, allow_not_found=True))
    return sorted(i.path[len(prefix) + 1 :] for i in infos if i.type == pafs.FileType.File)
