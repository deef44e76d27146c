#!/usr/bin/env bash
# Makes sure Debian's Chromium (and the fonts n8n's editor is drawn with) is installed, for the editor end-to-end
# tests (test/e2e/editor.e2e.test.ts and others in a real browser, driven by playwright-core). Idempotent: exits at
# once when both are there. Playwright's own browser download cannot work here (only Debian's and npm's registries
# are reachable), so the browser comes from Debian. Runs as root or through `sudo -n`. apt's output goes to stderr.
set -euo pipefail
chromium="${GEN_GATEWAY_E2E_CHROMIUM:-/usr/bin/chromium}"
if [ -x "$chromium" ] && dpkg -s fonts-liberation >/dev/null 2>&1; then exit 0; fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/apt-no-services.sh
. "$here/apt-no-services.sh"
echo "install-chromium: installing chromium and fonts-liberation from Debian's packages" >&2
apt_install_no_services chromium fonts-liberation
[ -x "$chromium" ] || { echo "install-chromium: $chromium still missing" >&2; exit 1; }
