# syntax=docker/dockerfile:1
# htorder in a container (docs/watch.md "Docker"):
#   docker run --rm --init -v "$PWD:/data" ... htorder run orders.yaml
#   docker run -d --init -v /srv/orders:/data ... htorder watch /data/drop
# Secrets come from files (HTORDER_CLIENT_SECRET_FILE=/run/secrets/htorder), never from
# flags or image layers. The working directory /data is the volume: manifests, the drop
# folder (/data/drop) and the ledger (/data/state) live there and outlive the container.
# .ci/image-test.sh builds this image and runs it (--version, a watcher, the HEALTHCHECK).

# --- production dependencies, exactly as the lock file has them ------------------------------
# Its own stage, keyed on package.json and the lock file only: a source change reuses it.
FROM node:20-bookworm-slim AS deps
# No registry round trip to ask whether npm itself is out of date.
ENV NPM_CONFIG_UPDATE_NOTIFIER=false
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm,sharing=locked \
    npm ci --omit=dev --ignore-scripts --no-audit --no-fund

# --- build: compile TypeScript and generate the manifest validator ----------------------------
# The compile needs only the compiler and the type packages, at the lock file's versions, not
# the whole development tree (linters, test runners, a browser). They go to /tools, linked as
# /node_modules, where TypeScript finds them by walking up from /app.
FROM deps AS build
RUN --mount=type=cache,target=/root/.npm,sharing=locked \
    mkdir /tools && cd /tools \
 && npm install --no-save --no-package-lock --ignore-scripts --no-audit --no-fund \
      $(node -p "const l=require('/app/package-lock.json').packages; \
        ['typescript','@types/node','@types/picomatch','@types/pg'].map((n)=>n+'@'+l['node_modules/'+n].version).join(' ')") \
 && ln -s /tools/node_modules /node_modules
ENV PATH=/tools/node_modules/.bin:$PATH
COPY tsconfig.json tsconfig.build.json ./
COPY build ./build
COPY schemas ./schemas
# The build reads the presets too: their header signatures are made ahead (build/preset-signatures.mjs).
COPY presets ./presets
COPY src ./src
RUN npm run build \
 && find dist -name '*.map' -delete

# --- runtime: node + the built package, as the unprivileged `node` user --------------------
# What changes least comes first, so that a source change rebuilds only the last layers.
FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    HTORDER_STATE_DIR=/data/state \
    HTORDER_HEALTH_PORT=9464 \
    HTORDER_HEALTH_HOST=0.0.0.0
# /data and the drop folder belong to `node` and only `node` may write them, so the drop folder
# needs no sticky bit; the ledger's folder is private to `node` (0700), as htorder makes it.
RUN install -d -o node -g node -m 0755 /data /data/drop \
 && install -d -o node -g node -m 0700 /data/state \
 && ln -s /app/dist/cli/main.js /usr/local/bin/htorder
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json README.md CHANGELOG.md LICENSE ./
COPY schemas ./schemas
COPY presets ./presets
# The samples are writable: `docker run htorder run --sandbox /app/samples/…` writes reports beside them.
COPY --chown=node:node samples ./samples
COPY --from=build /app/dist ./dist
USER node
WORKDIR /data
VOLUME ["/data"]
# `htorder watch` serves /healthz here (HTORDER_HEALTH_PORT; change the port with that
# variable, not with --health-port, so this check follows it).
EXPOSE 9464
# Healthy = the watcher's /healthz answers 200. A one-shot container (run, plan, check…)
# has no health server: the check passes when no `htorder watch` process is running.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "const fs=require('fs');const watching=fs.readdirSync('/proc').some((p)=>{try{return /^\\d+$/.test(p)&&fs.readFileSync('/proc/'+p+'/cmdline','utf8').split('\\0').includes('watch')}catch{return false}});if(!watching)process.exit(0);fetch('http://127.0.0.1:'+(process.env.HTORDER_HEALTH_PORT||'9464')+'/healthz').then((r)=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["htorder"]
CMD ["--help"]
