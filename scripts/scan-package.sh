#!/usr/bin/env bash
# Runs n8n's community-package scanner (@n8n/scan-community-package, the check n8n applies before verifying a
# package) on this package as it would be published: `npm pack` of the built dist, extracted, then the scanner's own
# analyzePackage() with its ESLint rule sets. The scanner lives in a cache folder, installed with --ignore-scripts:
# one of its dependencies carries a `preinstall: npx only-allow pnpm` that fails under npm.
set -euo pipefail
version=0.32.0
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${GEN_GATEWAY_SCAN_CACHE:-$HOME/.cache/gen-gateway-scan}/$version"
if [ ! -f "$cache/.installed" ]; then
	mkdir -p "$cache"
	echo '{ "name": "gen-gateway-scan-host", "private": true }' > "$cache/package.json"
	( cd "$cache" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error "@n8n/scan-community-package@$version" >&2 )
	touch "$cache/.installed"
fi
[ -f "$root/dist/index.js" ] || { echo "scan: dist/ is missing; run npm run build first" >&2; exit 1; }
work="$(mktemp -d /tmp/gen-gateway-scan.XXXXXX)"
trap 'rm -rf "$work"' EXIT
( cd "$root" && npm pack --silent --pack-destination "$work" >/dev/null )
mkdir "$work/package" && tar -xzf "$work"/*.tgz -C "$work/package" --strip-components=1
node --input-type=module -e '
	const [scanner, dir] = process.argv.slice(1);
	const { analyzePackage } = await import(scanner);
	const result = await analyzePackage(dir);
	if (!result.passed) { console.error(result.message); if (result.details) console.error(result.details); process.exit(1); }
	console.log("scan: the packed package passes n8n'"'"'s community-package scanner");
' "$cache/node_modules/@n8n/scan-community-package/scanner/scanner.mjs" "$work/package"
