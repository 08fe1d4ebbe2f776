#!/usr/bin/env bash
# Debian packages the test suite uses: sox (audio checks), kannel (SMPP interop; also the anchor of `npm run bench`),
# baresip-core (a SIP phone that answers Tern's calls), chromium (the console's browser tests drive it through
# playwright-core; no browser is downloaded), systemd (`systemd-analyze verify` checks deploy/tern.service),
# postgresql-client (psql for CI's database; pg_dump and pg_restore, whose commands `tern backup` and `tern restore`
# print, are run by their test), and the PostgreSQL high-availability stack of the failover drill: patroni,
# etcd-server (and etcd-client), haproxy, beside the postgresql server it manages; prometheus (its promtool checks
# /metrics, the alert rules and the dashboard's queries). espeak-ng is not needed: Tern's text-to-speech is built in.
# Installs only what is missing; needs root (or sudo) and Debian's package archive.
set -euo pipefail
packages=(sox kannel baresip-core chromium systemd postgresql-client postgresql patroni etcd-server etcd-client haproxy prometheus)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "installing Debian packages: ${missing[*]}"
# Nothing starts during the install (Debian's policy-rc.d convention) unless the machine already has a policy.
policy=/usr/sbin/policy-rc.d
own_policy=""
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\nexit 101\n' | $sudo tee "$policy" >/dev/null
  $sudo chmod 755 "$policy"
  own_policy=1
fi
cleanup() { [ -z "$own_policy" ] || $sudo rm -f "$policy"; }
trap cleanup EXIT
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# Installing a package enables its service: those just installed are stopped and disabled, so that none takes a port
# now or at boot (the drill starts its own on loopback ports; the suite's PostgreSQL is the one on 5432, if any).
if command -v systemctl >/dev/null 2>&1; then
  for p in "${missing[@]}"; do
    case "$p" in
      postgresql) unit=postgresql ;;
      patroni) unit=patroni ;;
      etcd-server) unit=etcd ;;
      haproxy) unit=haproxy ;;
      *) continue ;;
    esac
    $sudo systemctl disable --now "$unit.service" >/dev/null 2>&1 || $sudo systemctl disable "$unit.service" >/dev/null 2>&1 || true
  done
fi
