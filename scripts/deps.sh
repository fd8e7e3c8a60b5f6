#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what cuzk needs to build and test on Debian: compilers and libraries with apt-get
# (only the missing ones), and the npm packages the interoperability tests use (snarkjs).
set -euo pipefail
cd "$(dirname "$0")/.."

pkgs=(build-essential cmake pkg-config libgmp-dev libjansson-dev libmicrohttpd-dev libinih-dev libcurl4-openssl-dev libsqlite3-dev libpq-dev postgresql libssl-dev nodejs npm curl)
missing=()
for p in "${pkgs[@]}"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
# nodejs/npm may come from elsewhere (e.g. a preinstalled node); accept working binaries.
if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
    missing=("${missing[@]/nodejs}"); missing=("${missing[@]/npm}")
fi
todo=()
for p in "${missing[@]}"; do [ -n "$p" ] && todo+=("$p"); done
if [ ${#todo[@]} -gt 0 ]; then
    echo "deps: installing ${todo[*]}"
    SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${todo[@]}" >/dev/null
fi

if [ ! -x tests/js/node_modules/.bin/snarkjs ]; then
    echo "deps: npm install (tests/js)"
    (cd tests/js && npm install --no-audit --no-fund --loglevel=error)
fi
