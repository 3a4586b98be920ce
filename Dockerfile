# A container image that runs ztsa against a mounted workspace:
#   docker build -t ztsa . && docker run --rm -v "$PWD:/work:ro" ztsa check /work
FROM python:3.11-slim
RUN apt-get update && apt-get install -y --no-install-recommends bubblewrap util-linux \
        gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# setup.py and native/: `pip install .` builds the cffi helper that `ztsa exec` needs
COPY pyproject.toml setup.py MANIFEST.in README.md ./
COPY native ./native
COPY ztsa ./ztsa
RUN pip install --no-cache-dir . && useradd -m -u 1000 agent
USER agent
ENTRYPOINT ["ztsa"]
CMD ["check", "/work"]
