# syntax=docker/dockerfile:1
# The logdoctor sidecar: `logdoctor watch` on a folder of vLLM logs, JSON Lines on stdout, Prometheus
# /metrics and /healthz on port 9400. Build: docker build -t logdoctor:0.1.0 .
# (BuildKit, the default builder since Docker 23, is needed for the RUN --mount below.)

ARG PYTHON_IMAGE=python:3.11-slim

# --- builder: a wheel of the project (the pattern library is package data inside it) -------------
FROM ${PYTHON_IMAGE} AS builder
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore
WORKDIR /src
# pyproject.toml names README.md as the package's long description: the build needs it.
COPY pyproject.toml README.md ./
COPY logdoctor/ ./logdoctor/
COPY patterns/ ./patterns/
RUN pip wheel --no-deps --wheel-dir /wheels .

# --- final: the wheel and its dependencies (all pure Python or manylinux wheels), nothing else ------
FROM ${PYTHON_IMAGE}
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_ROOT_USER_ACTION=ignore \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
# The wheel is bind-mounted from the builder, so it is not left in a layer; pip keeps no cache.
RUN --mount=type=bind,from=builder,source=/wheels,target=/wheels \
    pip install --no-cache-dir /wheels/*.whl \
 && groupadd --gid 10001 logdoctor \
 && useradd --uid 10001 --gid 10001 --no-create-home --no-log-init --home-dir /nonexistent \
        --shell /usr/sbin/nologin logdoctor \
 && install -d -m 0755 /var/log/vllm \
 && install -d -m 0750 -o 10001 -g 10001 /var/lib/logdoctor
USER 10001:10001
EXPOSE 9400
# Kubernetes ignores HEALTHCHECK (the manifests use a livenessProbe); docker and compose use it.
# The port is the one CMD passes to --metrics-port: change both together.
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:9400/healthz', timeout=4)"]
ENTRYPOINT ["logdoctor"]
CMD ["watch", "/var/log/vllm", "--state", "/var/lib/logdoctor/state.json", "--metrics-port", "9400"]
