#!/usr/bin/env bash
# Sourced by infra/test.sh: finds Chromium, or installs Debian's package
# where it is missing and this user may (root, or sudo without a password),
# and, once it has seen it start headless, exports MYAO_CHROMIUM and
# MYAO_REQUIRE_CHROMIUM so that the page test runs and cannot skip.

chromium_bin() {
  if [ -n "${MYAO_CHROMIUM:-}" ]; then
    echo "$MYAO_CHROMIUM"
  else
    command -v chromium || command -v chromium-browser || true
  fi
}

if [ -z "$(chromium_bin)" ] && command -v apt-get >/dev/null 2>&1; then
  if [ "$(id -u)" -eq 0 ]; then
    as_root=(env)
  elif sudo -n true 2>/dev/null; then
    as_root=(sudo -n)
  else
    as_root=()
  fi
  if [ "${#as_root[@]}" -gt 0 ]; then
    echo "installing Debian's chromium for the report page's test" >&2
    "${as_root[@]}" DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null 2>&1 \
      || { "${as_root[@]}" apt-get update -qq >/dev/null 2>&1 \
           && "${as_root[@]}" DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null 2>&1; } \
      || echo "WARNING: could not install chromium" >&2
  fi
fi

chromium="$(chromium_bin)"
if [ -n "$chromium" ] && timeout 60 "$chromium" --headless --no-sandbox --version >/dev/null 2>&1; then
  export MYAO_CHROMIUM="$chromium" MYAO_REQUIRE_CHROMIUM=1
else
  echo "WARNING: no Chromium that starts headless: the report page's browser test will say it skipped" >&2
fi
