# syntax=docker/dockerfile:1
# htorder in a container: `docker run htorder run /data/orders.yaml`, or a long-running
# `watch` on a mounted drop folder. Secrets come from files (HTORDER_CLIENT_SECRET_FILE).

FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    HTORDER_STATE_DIR=/data/state
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json README.md ./
COPY schemas ./schemas
COPY --chown=node:node samples ./samples
RUN ln -s /app/dist/cli/main.js /usr/local/bin/htorder \
 && chmod +x /app/dist/cli/main.js \
 && mkdir -p /data/state \
 && chown -R node:node /data
USER node
WORKDIR /data
VOLUME ["/data"]
ENTRYPOINT ["htorder"]
CMD ["--help"]
