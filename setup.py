"""Maps the repository's folders to import names of the project's own: `backends/` is
installed as `etsuite.backends` and `tools/` as `etsuite.tools`, so nothing generic like a
top-level `tools` lands in site-packages. Every other setting is in setup.cfg."""

from setuptools import find_packages, setup

FOLDERS = ("backends", "tools")

setup(
    packages=[f"etsuite.{name}" for name in find_packages(include=[f"{f}*" for f in FOLDERS])],
    package_dir={f"etsuite.{folder}": folder for folder in FOLDERS},
)
