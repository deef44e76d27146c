#!/usr/bin/env bash
# Installs a pinned real n8n (1.x on Node 20) into a cache folder outside the package tree and reuses it.
# Facts behind the overrides: ../shared/N8N-REAL.md (xlsx from the registry; isolated-vm 5 builds on Node 20).
# Prints the folder that holds node_modules/.bin/n8n.
set -euo pipefail
version="${N8N_VERSION:-1.123.81}"
cache="${GEN_GATEWAY_N8N_CACHE:-$HOME/.cache/gen-gateway-n8n}"
dir="$cache/n8n-$version"
if [ -x "$dir/node_modules/.bin/n8n" ] && [ -f "$dir/.installed" ]; then
  echo "$dir"; exit 0
fi
mkdir -p "$dir"
cat > "$dir/package.json" <<JSON
{
  "name": "gen-gateway-n8n-host",
  "private": true,
  "dependencies": { "n8n": "$version" },
  "overrides": { "xlsx": "0.18.5", "isolated-vm": "5.0.4" }
}
JSON
( cd "$dir" && npm install --no-audit --no-fund --loglevel=error >&2 )
touch "$dir/.installed"
echo "$dir"
