"""pyarrow's view of an obstore-backed store: a ``pyarrow.fs.PyFileSystem`` handler, and obstore's errors as ours.

Parquet files (footers, row groups, base files written by tasks) go through pyarrow; on a store reached with
obstore, this handler makes them go through the same obstore client, with the same credentials, as everything
else (bench/README.md, ``bench_s3_data_path.py``: as fast as pyarrow's own S3 filesystem, 0.86-1.09x wall). It is
written against :class:`ObstoreBackend`, not S3: a GCS or Azure backend built on obstore reuses it as it is.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator, Protocol

import pyarrow as pa

from .backend_fs import BackendFileSystem, ListingBackend
from .store import StoreError

READ_BUFFER = 64 << 10  # bytes one read request fetches at least (a footer, a column chunk's pages)


class ObstoreBackend(ListingBackend, Protocol):
    def store_and_key(self, path: str) -> tuple[Any, str]: ...


@contextlib.contextmanager
def obstore_errors(request: str) -> Iterator[None]:
    """obstore's failures as :class:`StoreError` (an OSError) in one line naming ``request``; "not found" stays
    FileNotFoundError. (obstore's messages end in a multi-line debug dump of the request: dropped.)"""
    from obstore.exceptions import BaseError, NotFoundError

    try:
        yield
    except NotFoundError:
        raise
    except BaseError as exc:
        reason = " ".join(str(exc).split("Debug source:")[0].split())
        raise StoreError(f"{request}: {reason[:500]}") from None


class _Reader:
    """obstore's ``ReadableFile`` as pyarrow's ``PythonFile`` wants it (it asks for ``closed``)."""

    def __init__(self, handle: Any, path: str):
        self.handle, self.path, self.closed = handle, path, False

    def read(self, size: int | None = -1) -> bytes:
        with obstore_errors(f"GET {self.path}"):
            return bytes(self.handle.read(None if size is None or size < 0 else size))

    def seek(self, offset: int, whence: int = 0) -> int:
        return self.handle.seek(offset, whence)

    def tell(self) -> int:
        return self.handle.tell()

    def size(self) -> int:
        return self.handle.size

    def close(self) -> None:
        self.handle.close()
        self.closed = True


class _Writer:
    """obstore's ``WritableFile`` (its ``closed`` is a method; ``PythonFile`` reads it as an attribute). The object
    appears whole when the file closes (one PUT, or a completed multipart upload for a large file)."""

    def __init__(self, handle: Any, path: str):
        self.handle, self.path, self.closed = handle, path, False

    def write(self, data: Any) -> int:
        if not isinstance(data, bytes):  # a pyarrow Buffer exports signed bytes ('b'), which obstore refuses
            data = memoryview(data).cast("B")
        with obstore_errors(f"PUT {self.path}"):
            return self.handle.write(data)

    def flush(self) -> None:
        with obstore_errors(f"PUT {self.path}"):
            self.handle.flush()

    def close(self) -> None:
        if not self.closed:
            with obstore_errors(f"PUT {self.path}"):
                self.handle.close()
            self.closed = True


class ObstoreFileSystem(BackendFileSystem):
    backend: ObstoreBackend

    def __init__(self, backend: ObstoreBackend):
        super().__init__(backend)

    def get_type_name(self) -> str:
        return "obstore"

    def equals(self, other: Any) -> bool:
        return isinstance(other, ObstoreFileSystem) and other.backend is self.backend

    def move(self, src: str, dest: str) -> None:
        import obstore

        store, source = self.backend.store_and_key(src)
        _, target = self.backend.store_and_key(dest)
        with obstore_errors(f"COPY {src} {dest}"):
            obstore.rename(store, source, target)  # copy, then delete: object stores have no rename

    def copy_file(self, src: str, dest: str) -> None:
        import obstore

        store, source = self.backend.store_and_key(src)
        _, target = self.backend.store_and_key(dest)
        with obstore_errors(f"COPY {src} {dest}"):
            obstore.copy(store, source, target)

    def open_input_stream(self, path: str) -> pa.NativeFile:
        return self.open_input_file(path)

    def open_input_file(self, path: str) -> pa.NativeFile:
        import obstore

        store, key = self.backend.store_and_key(path)
        with obstore_errors(f"HEAD {path}"):
            handle = obstore.open_reader(store, key, buffer_size=READ_BUFFER)
        return pa.PythonFile(_Reader(handle, path), mode="r")

    def open_output_stream(self, path: str, metadata: Any = None) -> pa.NativeFile:
        import obstore

        store, key = self.backend.store_and_key(path)
        return pa.PythonFile(_Writer(obstore.open_writer(store, key), path), mode="w")

    def open_append_stream(self, path: str, metadata: Any = None) -> pa.NativeFile:
        raise StoreError(f"{path}: object stores cannot append to an object")
