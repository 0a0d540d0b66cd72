# syntax=docker/dockerfile:1
# inferwatch-server: collector, scheduler, dashboard and CLI in one image (docker-compose.yml runs each as a service).
# Build: docker build -t inferwatch-server .   Run: docker compose up -d   (see README, "Production")

FROM python:3.11-slim-bookworm AS build
WORKDIR /src
# Only what the two distributions need; exact versions come from constraints.txt, as in `make venv`.
COPY constraints.txt pyproject.toml README.md ./
COPY build_backend/ build_backend/
COPY sdk/ sdk/
COPY collector/ collector/
COPY alerts/ alerts/
COPY dashboard/ dashboard/
COPY server/ server/
COPY migrations/ migrations/
RUN python -m venv /opt/inferwatch \
    && /opt/inferwatch/bin/pip install --no-cache-dir --upgrade pip \
    && /opt/inferwatch/bin/pip install --no-cache-dir -c constraints.txt ./sdk .

FROM python:3.11-slim-bookworm
# A fixed, unprivileged user: the image never runs as root; volumes are owned by this uid.
RUN groupadd --system --gid 10001 inferwatch \
    && useradd --system --uid 10001 --gid inferwatch --create-home --home-dir /home/inferwatch inferwatch \
    && mkdir -p /var/lib/inferwatch/data /var/lib/inferwatch/spool \
    && chown -R inferwatch:inferwatch /var/lib/inferwatch
COPY --from=build /opt/inferwatch /opt/inferwatch
ENV PATH=/opt/inferwatch/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    INFERWATCH_HOST=0.0.0.0 \
    INFERWATCH_PORT=4318 \
    INFERWATCH_DATA_DIR=/var/lib/inferwatch/data \
    INFERWATCH_SPOOL_DIR=/var/lib/inferwatch/spool \
    INFERWATCH_LOG_FORMAT=json
USER inferwatch
WORKDIR /home/inferwatch
VOLUME ["/var/lib/inferwatch"]
EXPOSE 4318
# Liveness of the collector (the default command); compose overrides it for the other services.
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % os.environ.get('INFERWATCH_PORT', '4318'), timeout=4)"]
ENTRYPOINT ["inferwatch-server"]
CMD ["collector"]
