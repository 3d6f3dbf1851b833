#!/usr/bin/env bash
# Prepares a fresh Debian machine: redis-server and jq (for the README's walk-through) and,
# with --test, Chromium for the browser tests, nginx for the gateway test and Prometheus (promtool
# for the alert rules' unit tests, the server for the alerting test), from Debian's packages; then the npm dependencies from the lockfile, and the location board's static files
# (web/board/dist).
set -euo pipefail
cd "$(dirname "$0")/.."

want=()
command -v redis-server >/dev/null 2>&1 || want+=(redis-server)
command -v jq >/dev/null 2>&1 || want+=(jq)
if [[ "${1:-}" == "--test" ]]; then
  command -v chromium >/dev/null 2>&1 || want+=(chromium)
  # in /usr/sbin, which a non-root PATH may lack
  [[ -x /usr/sbin/nginx ]] || command -v nginx >/dev/null 2>&1 || want+=(nginx)
  command -v promtool >/dev/null 2>&1 || want+=(prometheus)
fi

if ((${#want[@]})); then
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  echo "setup: installing ${want[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null
  # The gateway and alerting tests run nginx and Prometheus themselves; the packaged services
  # (started by the install where systemd runs) are not wanted.
  for unit in nginx prometheus; do
    if [[ " ${want[*]} " == *" $unit "* ]] && command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet "$unit" 2>/dev/null; then
      $sudo systemctl disable --now "$unit" >/dev/null 2>&1 || true
    fi
  done
fi

# Exactly the lockfile's versions, as `npm ci` would; but `npm ci` refuses a lockfile without
# the other platforms' optional binaries, which the registry here does not serve, so install
# from the lockfile without rewriting it.
npm install --no-save --no-audit --no-fund --loglevel=error

# The board the API serves at /board (Vite; a few seconds).
npm run --silent build:board
