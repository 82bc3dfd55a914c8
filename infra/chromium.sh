#!/usr/bin/env bash
# Sourced by infra/test.sh: finds Chromium, or installs Debian's package
# where it is missing and this user may (root, or sudo without a password),
# and then exports MYAO_REQUIRE_CHROMIUM so that the page test cannot skip.

chromium_found() {
  command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 \
    || [ -n "${MYAO_CHROMIUM:-}" ]
}

if ! chromium_found && command -v apt-get >/dev/null 2>&1; then
  if [ "$(id -u)" -eq 0 ]; then
    as_root=()
  elif sudo -n true 2>/dev/null; then
    as_root=(sudo -n)
  else
    as_root=(false)
  fi
  if [ "${as_root[0]:-}" != false ]; then
    echo "installing Debian's chromium for the report page's test" >&2
    export DEBIAN_FRONTEND=noninteractive
    "${as_root[@]}" apt-get install -y -qq chromium >/dev/null 2>&1 \
      || { "${as_root[@]}" apt-get update -qq >/dev/null 2>&1 \
           && "${as_root[@]}" apt-get install -y -qq chromium >/dev/null 2>&1; } \
      || echo "WARNING: could not install chromium" >&2
  fi
fi

if chromium_found; then
  export MYAO_REQUIRE_CHROMIUM=1
else
  echo "WARNING: no Chromium: the report page's browser test will say it skipped" >&2
fi
