"""cffi builder for ztsa._native (API mode, compiled by `pip install .`)."""

from pathlib import Path

from cffi import FFI

HERE = Path(__file__).resolve().parent

ffibuilder = FFI()
ffibuilder.cdef((HERE / "ztsa_native.h").read_text().replace("/*", "\n/*"))
ffibuilder.set_source(
    "ztsa._native",
    '#include "ztsa_native.h"\n',
    # relative to the project root: setuptools refuses absolute source paths
    sources=["native/ztsa_native.c"],
    include_dirs=["native"],
    extra_compile_args=["-O2", "-Wall"],
)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
