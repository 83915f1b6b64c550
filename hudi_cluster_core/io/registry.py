"""The scheme table: which backend serves which URI scheme (pyiceberg's ``FileIO`` scheme table, in small).

A new store is one module implementing :class:`~hudi_cluster_core.io.store.Backend` plus one line in
:data:`BACKENDS` (or one :func:`register` call). Backends are imported on first use, so a store's client library
is loaded only when a table lives there. This module and the backends are the only places that name a scheme
(``tests/test_layering.py`` checks it).
"""

from __future__ import annotations

import importlib
from functools import lru_cache
from typing import TYPE_CHECKING
from urllib.parse import urlparse

from ..errors import StorageError

if TYPE_CHECKING:
    from .store import Backend

# scheme -> "module:Class"; "" is a path without a scheme. Insertion order is the order messages list them in.
BACKENDS: dict[str, str] = {
    "": "hudi_cluster_core.io.local_store:LocalBackend",
    "file": "hudi_cluster_core.io.local_store:LocalBackend",
    "s3": "hudi_cluster_core.io.s3_store:S3Backend",
    "s3a": "hudi_cluster_core.io.s3_store:S3Backend",
    "gs": "hudi_cluster_core.io.gcs_store:GCSBackend",
    "abfs": "hudi_cluster_core.io.azure_store:AzureBackend",
    "abfss": "hudi_cluster_core.io.azure_store:AzureBackend",
    "wasbs": "hudi_cluster_core.io.azure_store:AzureBackend",
}


def register(scheme: str, target: str) -> None:
    """Serve ``scheme://`` with the backend class ``target`` ("module:Class")."""
    BACKENDS[scheme] = target
    backend_class.cache_clear()


def scheme_of(uri: str) -> str:
    """The URI's scheme, lower case; "" for a path. (One letter is a Windows drive, not a scheme.)"""
    scheme = urlparse(uri).scheme.lower()
    return "" if len(scheme) == 1 else scheme


def supported() -> str:
    return ", ".join("local paths" if not s else f"{s}:" if _is_local(s) else f"{s}://" for s in BACKENDS)


def unsupported_scheme(uri: str, scheme: str) -> StorageError:
    return StorageError(f"{uri}: storage scheme '{scheme}://' is not supported; supported: {supported()}")


@lru_cache(maxsize=None)
def backend_class(scheme: str) -> "type[Backend]":
    """The backend for ``scheme``; StorageError naming the supported schemes when there is none."""
    target = BACKENDS.get(scheme)
    if target is None:
        raise unsupported_scheme(f"{scheme}://...", scheme)
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


def _is_local(scheme: str) -> bool:
    return scheme in BACKENDS and BACKENDS[scheme] == BACKENDS[""]


def is_local(uri: str) -> bool:
    """Whether ``uri`` names this machine's files (a path, or a scheme served like one)."""
    return _is_local(scheme_of(uri))


def local_path(uri: str) -> str:
    """A path or a ``file:`` URI as the local path it names."""
    from .local_store import local_path as path_of

    return path_of(uri)


def same_store(first_scheme: str, second_scheme: str) -> bool:
    """Whether two schemes reach the same store (``s3://`` and ``s3a://`` name the same objects)."""
    return BACKENDS.get(first_scheme, first_scheme) == BACKENDS.get(second_scheme, second_scheme)


def schemes_that_can(capability: str) -> str:
    """The schemes whose backend has ``capability`` (a :class:`~.store.Capabilities` field), for messages."""
    found = [s for s in BACKENDS if s and not _is_local(s) and getattr(backend_class(s).capabilities, capability)]
    return ", ".join(f"{s}://" for s in found) or "none"
