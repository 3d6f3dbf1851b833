#!/usr/bin/env bash
# Rolls this machine's role to the release checked out here (docs/upgrades.md#rolling-without-kubernetes):
# installs it as install.sh does, restarts its unit (SIGTERM: the old process drains), and waits
# until the role answers /healthz with this checkout's version (an API node also /readyz). Run it
# on every worker machine first, one at a time, then on every API node; to roll back, check out
# the previous release's commit (CHANGELOG.md names it) and run it in the reverse order, API
# nodes first. Run as root.
#   bash deploy/systemd/roll.sh api|worker
set -euo pipefail
role="${1:-}"
[[ "$role" == api || "$role" == worker ]] || { echo "usage: $0 api|worker" >&2; exit 2; }
cd "$(dirname "$0")/../.."
version=$(node -p 'require("./package.json").version')
env_file=/etc/pos/$role.env
port() { sed -n "s/^$1=//p" "$env_file" | tail -1; }
if [[ "$role" == api ]]; then port=$(port ADMIN_PORT); port=${port:-$(port PORT)}; port=${port:-8080}; else port=$(port METRICS_PORT); port=${port:-9464}; fi

bash deploy/systemd/install.sh "$role"
systemctl daemon-reload
systemctl restart "pos-$role"
for _ in $(seq 1 120); do
  if curl -sf "http://127.0.0.1:$port/healthz" | grep -q "\"version\":\"$version\"" &&
    { [[ "$role" == worker ]] || curl -sf -o /dev/null "http://127.0.0.1:$port/readyz"; }; then
    echo "pos-$role runs $version"
    exit 0
  fi
  sleep 1
done
echo "pos-$role did not answer with $version within 120 s: journalctl -u pos-$role" >&2
exit 1
