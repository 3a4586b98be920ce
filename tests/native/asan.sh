#!/usr/bin/env bash
# The parser tests of tests/native against a copy of the native module built with
# AddressSanitizer and UndefinedBehaviorSanitizer (not part of CI: run by hand, from a
# virtual environment with the test extras installed). The Python host is not built
# with ASan, so libasan is preloaded; leaks are not checked (the interpreter's are not
# ours). ZTSA_FUZZ_EXAMPLES: examples per property (default here 500).
#   tests/native/asan.sh [pytest arguments]
set -euo pipefail
cd "$(dirname "$0")/../.."

work=$(mktemp -d /var/tmp/ztsa-asan-XXXXXX)
trap 'rm -rf "$work"' EXIT
tar -c --exclude='*.so' --exclude=__pycache__ --exclude=.hypothesis \
  setup.py pyproject.toml conftest.py README.md native ztsa tests | tar -x -C "$work"

san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
(cd "$work" && CFLAGS="$san" LDFLAGS="$san" python setup.py -q build_ext --inplace)

export PYTHONPATH="$work" ZTSA_FUZZ_EXAMPLES="${ZTSA_FUZZ_EXAMPLES:-500}"
export LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1
cd "$work"
# the sanitized module, not the checkout's or an installed one
python -c 'import sys, ztsa._native as n; sys.exit(not n.__file__.startswith(sys.argv[1]))' \
  "$work/"
python -m pytest -q -p no:cacheprovider tests/native "$@"
