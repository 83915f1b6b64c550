"""A throwaway venv for tests that install or uninstall distributions, so the project's own venv never changes.

It sees the project venv's third-party packages through a ``.pth`` file naming a directory of links to them
(hudi-cluster's own distributions left out), and gets the core and the plugins a test names installed editable
from this checkout, without dependencies. ``bin/pip`` and ``bin/pytest`` run the throwaway venv's python.
"""

from __future__ import annotations

import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SHARED_SITE = Path(sysconfig.get_paths()["purelib"])  # the test process runs in the project venv
OWN_PREFIXES = ("hudi_cluster", "__editable__.hudi_cluster", "__editable___hudi_cluster")


@dataclass(frozen=True)
class Venv:
    root: Path

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    def run(self, *args: object, check: bool = False) -> subprocess.CompletedProcess:
        return subprocess.run([self.bin / "python", *map(str, args)], capture_output=True, text=True, check=check)

    def pip(self, *args: object) -> subprocess.CompletedProcess:
        done = self.run("-m", "pip", "-q", "--disable-pip-version-check", *args)
        assert done.returncode == 0, f"pip {' '.join(map(str, args))} failed:\n{done.stdout}\n{done.stderr}"
        return done


def make_venv(root: Path, projects: tuple[str, ...] = ()) -> Venv:
    """A venv at ``root`` with the core and ``projects`` (paths relative to the checkout) installed editable."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", root], check=True)
    venv = Venv(root)
    site = Path(venv.run("-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", check=True).stdout.strip())
    shared = root / "shared-packages"
    shared.mkdir()
    for entry in SHARED_SITE.iterdir():
        if not entry.name.startswith(OWN_PREFIXES) and entry.suffix != ".pth":
            (shared / entry.name).symlink_to(entry)
    (site / "shared-packages.pth").write_text(f"{shared}\n")
    for tool, module in (("pip", "pip"), ("pytest", "pytest")):
        script = venv.bin / tool
        script.write_text(f'#!/bin/sh\nexec "{venv.bin / "python"}" -m {module} "$@"\n')
        script.chmod(0o755)
    editable = [arg for project in (".", *projects) for arg in ("-e", str(REPO / project))]
    venv.pip("install", "--no-deps", *editable)
    return venv
