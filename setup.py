"""Packages are found, not listed: a new format package (translator/formats/<fmt>/) needs no
metadata edit. Everything else is in setup.cfg; the data folders are installed as packages."""

from setuptools import find_packages, setup

setup(packages=[*find_packages(include=["translator", "translator.*"]), "translator.mappings", "translator.schemas"])
