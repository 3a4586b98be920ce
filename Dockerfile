# ztsa as a container image: the gate (`check`) for a mounted workspace, `doctor`, and
# `exec` for confined work inside the container (docs/container.md):
#   docker build -t ztsa .
#   docker run --rm -v "$PWD:/work:ro" ztsa check /work
#   docker run --rm ztsa doctor
#
# Stages: `build` compiles the wheel (the compiler, the Python headers and pip's
# downloads stay there); `install` makes a venv from wheels only (binary only, no
# index), from the stage `wheels`; the image copies that venv (no compiler, no
# headers, no pip) and runs as an unprivileged user. To install wheels built elsewhere
# instead (a release's, or `pip wheel -w DIR .`: ztsa's and its dependencies', for the
# base's Python), give their directory as the build context `wheels`, which replaces
# the stage of that name (the build stage is then not built):
#   docker build --build-context wheels=DIR -t ztsa .
# BASE is any Debian-like image with python3 (3.10 on); the build stage adds the
# compiler, and on a distribution's Python its headers and venv module.
# integration/container/build.sh builds and runs this with a base made by mmdebstrap.
ARG BASE=python:3.12-slim

FROM ${BASE} AS build
RUN set -eu; export DEBIAN_FRONTEND=noninteractive; \
    pkgs="gcc libc6-dev"; \
    python3 -c 'import sysconfig, os, sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' \
        || pkgs="$pkgs python3-dev"; \
    python3 -c 'import ensurepip' 2>/dev/null || pkgs="$pkgs python3-venv"; \
    apt-get update; apt-get install -y --no-install-recommends $pkgs; \
    rm -rf /var/lib/apt/lists/*; \
    python3 -m venv /build
WORKDIR /src
COPY pyproject.toml setup.py MANIFEST.in README.md ./
COPY native ./native
COPY ztsa ./ztsa
# ztsa's wheel and its dependencies' (cffi, PyYAML, ...), for the image's Python
RUN /build/bin/pip wheel --no-cache-dir --wheel-dir /wheels .

# the wheels at /, as a `--build-context wheels=DIR` directory holds them
FROM scratch AS wheels
COPY --from=build /wheels/ /

# the venv, made where the wheels are (a COPY: a changed wheel is a changed layer)
FROM ${BASE} AS install
COPY --from=wheels / /wheels/
# `python3 -m venv` needs ensurepip: a distribution's Python has it in python3-venv
RUN set -eu; \
    if ! python3 -c 'import ensurepip' 2>/dev/null; then \
        apt-get update; DEBIAN_FRONTEND=noninteractive apt-get install -y \
            --no-install-recommends python3-venv; fi; \
    python3 -m venv /opt/ztsa; \
    /opt/ztsa/bin/pip install --no-cache-dir --no-index --only-binary=:all: \
        --find-links /wheels ztsa; \
    /opt/ztsa/bin/pip uninstall --yes pip

# the image: the base, the venv (no compiler, no headers, no wheels, no pip), a user
FROM ${BASE}
COPY --from=install /opt/ztsa /opt/ztsa
RUN set -eu; \
    useradd --create-home --uid 1000 --user-group --shell /bin/sh agent; \
    mkdir /work; chown agent:agent /work; \
    /opt/ztsa/bin/ztsa --version
ENV PATH=/opt/ztsa/bin:$PATH
USER agent
WORKDIR /work
ENTRYPOINT ["/opt/ztsa/bin/ztsa"]
CMD ["check", "/work"]
