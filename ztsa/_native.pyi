# The cffi extension built from native/ztsa_native.c; typed through ztsa.sandbox.native.
from typing import Any

ffi: Any
lib: Any
