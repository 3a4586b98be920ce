# The cffi extension built from native/*.c (interface: native/ztsa_native.h); typed
# through ztsa.sandbox.native.
from typing import Any

ffi: Any
lib: Any
