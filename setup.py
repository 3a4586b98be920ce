"""The native helper is built with cffi; setuptools only takes cffi_modules here."""

from setuptools import setup

setup(cffi_modules=["native/build_native.py:ffibuilder"])
