#!/usr/bin/env bash
# Debian packages the test suite drives for real: PostgreSQL, Prometheus Alertmanager, Chromium.
set -euo pipefail
need=()
command -v prometheus-alertmanager >/dev/null || need+=(prometheus-alertmanager)
command -v amtool >/dev/null || need+=(prometheus-alertmanager)
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || need+=(postgresql)
command -v chromium >/dev/null || need+=(chromium)
command -v chromedriver >/dev/null || need+=(chromium-driver)
[ ${#need[@]} -eq 0 ] && exit 0
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${need[@]}"
