"""Packages are found, not listed: a new format package (translator/formats/<fmt>/) needs no
metadata edit. The source folder `translator/` installs as the import package `neoconv` (another
distribution on the package index is named `translator`), the data folders as its subpackages
`neoconv.mappings` and `neoconv.schemas` (`package_dir` in setup.cfg). The rest is in setup.cfg."""

from setuptools import find_packages, setup

found = find_packages(include=["translator", "translator.*"])
setup(packages=["neoconv" + name[len("translator") :] for name in found] + ["neoconv.mappings", "neoconv.schemas"])
