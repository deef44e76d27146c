#!/usr/bin/env bash
# Makes sure `redis-server` is installed (Debian's package redis-server), for the queue-mode end-to-end test
# (test/e2e/queue.e2e.test.ts). Idempotent: exits at once when it is there. Never starts or enables a system
# service: the test starts its own redis-server on a free loopback port in a temporary folder.
# Runs as root (CI, this machine) or through `sudo -n`. Output of apt goes to stderr.
set -euo pipefail
if command -v redis-server >/dev/null 2>&1; then exit 0; fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/apt-no-services.sh
. "$here/apt-no-services.sh"
echo "install-redis: installing redis-server from Debian's packages" >&2
apt_install_no_services redis-server
command -v redis-server >/dev/null 2>&1 || { echo "install-redis: redis-server still missing" >&2; exit 1; }
