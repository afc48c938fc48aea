# syntax=docker/dockerfile:1
# htorder in a container (README "Docker"):
#   docker run --rm --init -v "$PWD:/data" ... htorder run orders.yaml
#   docker run -d --init -v /srv/orders:/data ... htorder watch /data/drop
# Secrets come from files (HTORDER_CLIENT_SECRET_FILE=/run/secrets/htorder), never from
# flags or image layers. The working directory /data is the volume: manifests, the drop
# folder (/data/drop) and the ledger (/data/state) live there and outlive the container.

# --- build: compile TypeScript, then keep only the production dependencies ---------------
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
# The build also generates the manifest validator from the schema (build/standalone-validators.mjs).
COPY build ./build
COPY schemas ./schemas
RUN npm run build \
 && npm prune --omit=dev \
 && find dist -name '*.map' -delete

# --- runtime: node + the built package, as the unprivileged `node` user --------------------
FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    HTORDER_STATE_DIR=/data/state \
    HTORDER_HEALTH_PORT=9464 \
    HTORDER_HEALTH_HOST=0.0.0.0
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json README.md CHANGELOG.md LICENSE ./
COPY schemas ./schemas
# The samples are writable: `docker run htorder run --sandbox /app/samples/…` writes reports beside them.
COPY --chown=node:node samples ./samples
RUN ln -s /app/dist/cli/main.js /usr/local/bin/htorder \
 && chmod +x /app/dist/cli/main.js \
 && mkdir -p /data/state /data/drop \
 && chown -R node:node /data
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
