# kwave's container image: `docker build -t REGISTRY/kwave:TAG .` (deploy/ runs it as a Job and a
# CronJob). Two stages: the first compiles TypeScript with the dev tools, the second holds only
# the production dependencies, the compiled dist/ and the data files, and runs as the unprivileged
# `node` user. scripts/check-production-install.sh runs the second stage's steps in CI (no
# container engine there): a clean `npm ci --omit=dev` must be enough to run kwave.
FROM node:20-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY schemas ./schemas
COPY src ./src
RUN npm run build

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` builds with the dev tools, which this stage does not have.
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts && npm cache clean --force
COPY --from=build /src/dist ./dist
COPY bin ./bin
COPY schemas ./schemas
COPY plans ./plans
COPY deploy ./deploy
USER node
ENTRYPOINT ["node", "/app/bin/kwave.js"]
CMD ["--help"]
