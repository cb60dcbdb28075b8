# The yarn-advisor image the Helm chart (helm/yarn-advisor) runs:
#   docker build -t registry.example.com/yarn-advisor:0.1.0 .
#   docker build --build-arg EXTRAS=kerberos -t .../yarn-advisor:0.1.0-kerberos .
# EXTRAS names the optional extras to install (kerberos, ha, or kerberos,ha);
# none by default. The package is built as a wheel with its dependencies in a
# first stage and installed from those wheels alone; the image runs as the
# unprivileged user 10001 and writes only to /var/lib/yarn-advisor (state_dir)
# and /tmp, so it runs with a read-only root filesystem. The wheel is the one
# `pip install .` builds (the simulator included, for `yarn-advisor simulate`
# from the image); the daemon itself never imports the simulator.
# .ci/install-check builds that wheel from exactly what this file copies.
ARG PYTHON_IMAGE=python:3.11-slim-bookworm

FROM ${PYTHON_IMAGE} AS build
ARG EXTRAS=""
# requests-gssapi's gssapi is compiled against MIT Kerberos
RUN if [ -n "$EXTRAS" ] && echo ",$EXTRAS," | grep -q ",kerberos,"; then \
      apt-get update && apt-get install -y --no-install-recommends gcc libkrb5-dev \
      && rm -rf /var/lib/apt/lists/*; \
    fi
WORKDIR /src
COPY pyproject.toml README.md ./
COPY advisor/ advisor/
COPY connectors/ connectors/
COPY classifiers/ classifiers/
COPY config/ config/
COPY simulator/ simulator/
RUN pip wheel --no-cache-dir --wheel-dir /wheels ".${EXTRAS:+[$EXTRAS]}"

FROM ${PYTHON_IMAGE}
ARG EXTRAS=""
RUN if [ -n "$EXTRAS" ] && echo ",$EXTRAS," | grep -q ",kerberos,"; then \
      apt-get update && apt-get install -y --no-install-recommends libgssapi-krb5-2 \
      && rm -rf /var/lib/apt/lists/*; \
    fi \
    && groupadd --system --gid 10001 yarn-advisor \
    && useradd --system --uid 10001 --gid 10001 --home-dir /var/lib/yarn-advisor \
       --no-create-home --shell /usr/sbin/nologin yarn-advisor \
    && mkdir -p /var/lib/yarn-advisor /etc/yarn-advisor \
    && chown 10001:10001 /var/lib/yarn-advisor
COPY --from=build /wheels /tmp/wheels
RUN pip install --no-cache-dir --no-index --find-links /tmp/wheels \
      "yarn-advisor${EXTRAS:+[$EXTRAS]}" \
    && rm -rf /tmp/wheels \
    && yarn-advisor --help >/dev/null \
    && yarn-advisor simulate --help >/dev/null
ENV PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
USER 10001:10001
WORKDIR /var/lib/yarn-advisor
EXPOSE 9135
ENTRYPOINT ["yarn-advisor"]
CMD ["run", "--config", "/etc/yarn-advisor/advisor.yaml"]
