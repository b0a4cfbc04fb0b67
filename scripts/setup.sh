#!/bin/sh
# Installs what muster needs to build and test on Debian 12 (as root, or
# with sudo when it is there). Safe to run again. --test adds what only the
# tests use: Debian's Chromium, the headless browser the /ui test drives.
set -eu
pkgs="meson ninja-build gcc pkg-config libcurl4-openssl-dev libmicrohttpd-dev \
libgnutls28-dev libjansson-dev libyaml-dev libssl-dev check jq valgrind openssl \
python3 ca-certificates"
[ "${1:-}" = --test ] && pkgs="$pkgs chromium"
missing=""
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
        missing="$missing $p"
done
[ -z "$missing" ] && exit 0
sudo=""
[ "$(id -u)" = 0 ] || sudo=sudo
echo "installing:$missing"
$sudo apt-get update -qq
# shellcheck disable=SC2086
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing >/dev/null
