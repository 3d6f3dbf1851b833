# One image per role, each with only that role's production dependencies:
#   docker build --target api -t pos-api .
#   docker build --target worker -t pos-worker .
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json ./
COPY shared/package.json shared/
COPY services/api/package.json services/api/
COPY services/worker/package.json services/worker/
# The lockfile's versions (see scripts/setup.sh for why not npm ci).
RUN npm install --no-save --no-audit --no-fund --omit=optional
COPY shared shared
COPY services services
RUN npm run build

# The workspace manifests and the lockfile, from which each role installs its own dependencies.
FROM node:20-bookworm-slim AS runtime
# Packages resolve to their compiled dist/ under the `production` export condition.
ENV NODE_ENV=production NODE_OPTIONS=--conditions=production
WORKDIR /app
COPY package.json package-lock.json ./
COPY shared/package.json shared/
COPY services/api/package.json services/api/
COPY services/worker/package.json services/worker/

FROM runtime AS worker
RUN npm install --no-save --no-audit --no-fund --omit=dev --omit=optional --workspace=@pos/worker && npm cache clean --force
COPY --from=build /app/shared/dist shared/dist
COPY --from=build /app/services/worker/dist services/worker/dist
USER node
CMD ["node", "services/worker/dist/main.js"]

# Last, so that a plain `docker build .` gives the API.
FROM runtime AS api
RUN npm install --no-save --no-audit --no-fund --omit=dev --omit=optional --workspace=@pos/api && npm cache clean --force
COPY --from=build /app/shared/dist shared/dist
COPY --from=build /app/services/api/dist services/api/dist
USER node
EXPOSE 8080
CMD ["node", "services/api/dist/main.js"]
