"""The example metric plugin (``examples/plugin-cer``) installed the way pip lays a package
out -- the module beside a ``.dist-info`` folder whose ``entry_points.txt`` holds the
pyproject's entry points -- without building a wheel (no network, no wheel package)."""

from __future__ import annotations

import shutil
from pathlib import Path

import tomllib

from tests.conftest import ROOT

PLUGIN = ROOT / "examples" / "plugin-cer"


def install_example(target: Path) -> Path:
    """Install the example into ``target`` (a folder for sys.path/PYTHONPATH); returns it."""
    project = tomllib.loads((PLUGIN / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    name, version = project["name"], project["version"]
    target.mkdir(parents=True, exist_ok=True)
    for module in (PLUGIN).glob("*.py"):
        shutil.copy(module, target / module.name)
    info = target / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8"
    )
    groups = project["entry-points"]
    (info / "entry_points.txt").write_text(
        "".join(
            f"[{group}]\n" + "".join(f"{key} = {value}\n" for key, value in points.items())
            for group, points in groups.items()
        ),
        encoding="utf-8",
    )
    return target
