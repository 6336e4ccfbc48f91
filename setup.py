"""Builds bleucli's optional compiled core (``bleucli._native``) when a C compiler is there.

Everything else is in pyproject.toml. Without a compiler, or if the build fails, the install
still succeeds with the pure-Python engine and says so once. The core records a hash of the
C sources it was built from, so that a source checkout never runs a core older than its
sources (bleucli/native.py compares them).
"""

import sys
from pathlib import Path

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext

SOURCES = [
    "bleucli/_native.c",
    "bleucli/_native_ter.c",
    "bleucli/_native_batch.c",
    "bleucli/_native_aligned.c",
    "bleucli/_native_mwer.c",
    "bleucli/_native_kendall.c",
]
#: Everything the core is built from, in the order bleucli/native.py hashes it.
HASHED = [*SOURCES, "bleucli/_native.h", "bleucli/_native_batch.h"]


def source_hash() -> str:
    """The same digest as ``bleucli.native.source_hash`` (kept standalone: the build must
    not import the package)."""
    import zlib

    data = b"".join(Path(name).read_bytes() for name in HASHED)
    return f"{zlib.crc32(data):08x}-{len(data)}"


#: POSIX threads for the batch engine (Windows builds run it on one thread).
THREADS = [] if sys.platform == "win32" else ["-pthread"]


class OptionalBuildExt(build_ext):
    """``build_ext`` that turns a failed compilation into one clear notice."""

    def run(self):
        try:
            super().run()
        except Exception as err:  # noqa: BLE001 - any failure means: no native engine
            self._notice(err)

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as err:  # noqa: BLE001
            self._notice(err)

    @staticmethod
    def _notice(err):
        print(
            f"bleucli: the compiled core could not be built ({err}); installing the "
            f"pure-Python engine (same results, slower)"
        )


def packages() -> list[str]:
    """Every package folder under bleucli/ (found, not listed), and the test-set registry:
    the top-level testsets/ folder (data, not code), shipped inside the package as
    bleucli._registry with its subfolders (pyproject maps the folder)."""
    registry = Path("testsets")
    folders = sorted(p for p in registry.rglob("*") if p.is_dir() and p.name != "__pycache__")
    return [
        *find_packages(include=["bleucli", "bleucli.*"]),
        "bleucli._registry",
        *("bleucli._registry." + ".".join(p.relative_to(registry).parts) for p in folders),
    ]


setup(
    packages=packages(),
    ext_modules=[
        Extension(
            "bleucli._native",
            SOURCES,
            depends=["bleucli/_native.h", "bleucli/_native_batch.h"],
            define_macros=[("BLEUCLI_SOURCE_HASH", f'"{source_hash()}"')],
            extra_compile_args=["-O2", "-std=c99", *THREADS],
            extra_link_args=THREADS,
        )
    ],
    cmdclass={"build_ext": OptionalBuildExt},
)
