"""A local S3-compatible server (moto_server) on a free 127.0.0.1 port, for reports_upload."""
from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tests.support.twin import VENV_BIN

MOTO = shutil.which("moto_server", path=str(VENV_BIN)) or shutil.which("moto_server")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def moto_s3(access_key: str, secret_key: str, bucket: str) -> Iterator[tuple[str, Any]]:
    """(endpoint URL, boto3 client) of a running moto_server holding an empty `bucket`; stopped afterwards."""
    import boto3

    if not MOTO:
        raise RuntimeError("no moto_server: pip install --no-deps -r requirements-s3-dev.txt")
    port = free_port()
    proc = subprocess.Popen([MOTO, "-H", "127.0.0.1", "-p", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    url = "http://127.0.0.1:%d" % port
    deadline = time.monotonic() + 60
    try:
        while True:  # ready when it accepts connections; proc.wait doubles as the pause and the crash check
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("moto_server did not listen on %s within 60 s" % url) from None
                try:
                    proc.wait(timeout=0.2)
                    raise RuntimeError("moto_server exited with %s" % proc.returncode)
                except subprocess.TimeoutExpired:
                    pass
        s3 = boto3.client("s3", endpoint_url=url, region_name="us-east-1", aws_access_key_id=access_key,
                          aws_secret_access_key=secret_key)
        s3.create_bucket(Bucket=bucket)
        yield url, s3
    finally:
        proc.terminate()
        proc.wait(timeout=30)
