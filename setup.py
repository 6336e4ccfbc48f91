"""Builds bleucli's optional compiled core (``bleucli._native``) when a C compiler is there.

Everything else is in pyproject.toml. Without a compiler, or if the build fails, the install
still succeeds with the pure-Python engine and says so once.
"""

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


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
        print(f"bleucli: the compiled core could not be built ({err}); installing the "
              f"pure-Python engine (same results, slower)")


setup(
    ext_modules=[Extension("bleucli._native", ["bleucli/_native.c", "bleucli/_native_ter.c"],
                           extra_compile_args=["-O2", "-std=c99"])],
    cmdclass={"build_ext": OptionalBuildExt},
)
