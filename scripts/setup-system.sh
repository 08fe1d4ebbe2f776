#!/usr/bin/env bash
# Debian packages the test suite uses: sox (audio checks), kannel (SMPP interop; also the anchor of `npm run bench`),
# baresip-core (a SIP phone that answers Tern's calls), chromium (the console's browser tests drive it through
# playwright-core; no browser is downloaded). espeak-ng is not needed: Tern's text-to-speech is built in.
# Installs only what is missing; needs root (or sudo) and Debian's package archive.
set -euo pipefail
packages=(sox kannel baresip-core chromium)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "installing Debian packages: ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
