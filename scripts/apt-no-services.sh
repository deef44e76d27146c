# Sourced by install-redis.sh and install-postgres.sh: `apt_install_no_services <package>...` installs Debian
# packages without letting their post-install scripts start a system service (a policy-rc.d that answers 101,
# removed again afterwards if we added it). Needs root or `sudo -n`.
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo -n "$@"; fi; }

apt_install_no_services() {
	local policy=/usr/sbin/policy-rc.d added=0 status=0
	if [ ! -e "$policy" ]; then
		as_root sh -c "printf '#!/bin/sh\nexit 101\n' > $policy && chmod 755 $policy"
		added=1
	fi
	{
		as_root apt-get update -qq &&
			as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@"
	} >&2 || status=$?
	if [ "$added" = 1 ]; then as_root rm -f "$policy"; fi
	return "$status"
}
