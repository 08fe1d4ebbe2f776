#!/usr/bin/env bash
# Debian packages the test suite uses: espeak-ng (text-to-speech), sox (audio checks), kannel (SMPP interop).
# Installs only what is missing; needs root (or sudo) and Debian's package archive.
set -euo pipefail
packages=(espeak-ng sox kannel)
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
