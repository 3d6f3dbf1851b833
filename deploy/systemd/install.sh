#!/usr/bin/env bash
# Installs one role for its systemd unit (docs/production.md#on-vms), as the Dockerfile builds its
# image: the packages built (npm run build, from a checkout set up with scripts/setup.sh), the
# role's compiled code and production dependencies in /opt/pos, its unit, and its environment
# file in /etc/pos (mode 0600, from the example: then edit it). Run as root; DESTDIR puts it all
# under another root (the docs' test does). An existing environment file is kept.
#   bash deploy/systemd/install.sh api|worker
set -euo pipefail
role="${1:-}"
case "$role" in
  api) workspace=@pos/api ;;
  worker) workspace=@pos/worker ;;
  *) echo "usage: $0 api|worker" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/../.."
root="${DESTDIR:-}"
app="$root/opt/pos"

npm run --silent build
# the workspace manifests and the lockfile, from which the role installs its own dependencies
install -d "$app/shared" "$app/services/api" "$app/services/worker" "$app/web/board"
install -m 0644 package.json package-lock.json "$app/"
for pkg in shared services/api services/worker web/board; do install -m 0644 "$pkg/package.json" "$app/$pkg/"; done
rm -rf "$app/shared/dist" "$app/services/$role/dist"
cp -r shared/dist "$app/shared/dist"
cp -r "services/$role/dist" "$app/services/$role/dist"
# the board, which the API serves at /board
if [[ "$role" == api ]]; then rm -rf "$app/web/board/dist" && cp -r web/board/dist "$app/web/board/dist"; fi
(cd "$app" && npm install --no-save --no-audit --no-fund --loglevel=error --omit=dev --omit=optional --workspace="$workspace")

install -d -m 0755 "$root/etc/systemd/system"
install -m 0644 "deploy/systemd/pos-$role.service" "$root/etc/systemd/system/"
install -d -m 0750 "$root/etc/pos"
[[ -e "$root/etc/pos/$role.env" ]] || install -m 0600 "deploy/systemd/$role.env.example" "$root/etc/pos/$role.env"
echo "installed the $role role in $app; edit $root/etc/pos/$role.env (its secrets), then: systemctl daemon-reload && systemctl enable --now pos-$role"
