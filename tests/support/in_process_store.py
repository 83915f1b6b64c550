"""What a test store living in this process's memory is, whatever keeps its objects (obstore's ``MemoryStore``
for ``memory://``, the simulator's world for ``sim://``): no settings to resolve or ship (a Spark task in another
process could not reach it anyway), and paths ``bucket/key`` under URIs ``scheme://bucket/key``.
"""

from __future__ import annotations

from typing import Mapping

from hudi_cluster_core.io.store import Backend


class InProcessBackend(Backend):
    """A backend's settings and paths for a store in this process; subclasses keep the objects."""

    def __init__(self, base_uri: str, options: Mapping[str, str] | None = None, environ: Mapping[str, str] | None = None):
        pass

    @property
    def options(self) -> dict[str, str]:
        return {}

    def path_of(self, uri: str) -> str:
        return uri.partition("://")[2] if "://" in uri else uri

    def qualified(self, scheme: str, path: str) -> str:
        return f"{scheme}://{path}"
