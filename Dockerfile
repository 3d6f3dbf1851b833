# One image for both roles; docker-compose picks the role with the command.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
# The lockfile's versions (see scripts/setup.sh for why not npm ci).
RUN npm install --no-save --no-audit --no-fund --omit=optional
COPY tsconfig.json tsconfig.build.json ./
COPY shared shared
COPY services services
RUN npm run build && npm prune --omit=dev --omit=optional

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist dist
COPY package.json ./
USER node
EXPOSE 8080
CMD ["node", "dist/services/api/src/main.js"]
