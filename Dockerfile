# A container image that runs ztsa against a mounted workspace:
#   docker build -t ztsa . && docker run --rm -v "$PWD:/work:ro" ztsa check /work
FROM python:3.11-slim
RUN apt-get update && apt-get install -y --no-install-recommends bubblewrap util-linux \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml README.md ./
COPY ztsa ./ztsa
RUN pip install --no-cache-dir . && useradd -m -u 1000 agent
USER agent
ENTRYPOINT ["ztsa"]
CMD ["check", "/work"]
