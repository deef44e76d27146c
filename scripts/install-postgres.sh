#!/usr/bin/env bash
# Makes sure PostgreSQL's server programs (initdb, postgres, psql) are installed (Debian's package postgresql), for
# the queue-mode end-to-end test (test/e2e/queue.e2e.test.ts): n8n's queue mode wants PostgreSQL, not sqlite.
# Idempotent: exits at once when they are there (this machine kind ships them). Never starts a system cluster:
# the test runs its own cluster in a temporary folder on a free loopback port.
# Runs as root (CI, this machine) or through `sudo -n`. Output of apt goes to stderr.
set -euo pipefail
have_postgres() {
	local dir
	for dir in /usr/lib/postgresql/*/bin; do
		if [ -x "$dir/initdb" ] && [ -x "$dir/postgres" ] && [ -x "$dir/psql" ]; then return 0; fi
	done
	command -v initdb >/dev/null 2>&1 && command -v postgres >/dev/null 2>&1 && command -v psql >/dev/null 2>&1
}
if have_postgres; then exit 0; fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/apt-no-services.sh
. "$here/apt-no-services.sh"
echo "install-postgres: installing postgresql from Debian's packages" >&2
apt_install_no_services postgresql
have_postgres || { echo "install-postgres: initdb/postgres/psql still missing" >&2; exit 1; }
