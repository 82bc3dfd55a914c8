# Sourced by infra/test.sh and infra/coldstart.sh: installs the AWS emulator
# (moto's server, from PyPI) into .venv when missing, starts it on a free
# loopback port (stopped when the calling script exits), and exports
# MYAO_TEST_AWS_ENDPOINT and the dummy credentials the tests use.

venv=.venv
if [ ! -x "$venv/bin/moto_server" ]; then
  echo "==> installing moto[server] into $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check 'moto[server]>=5.1,<6'
fi

port=$("$venv/bin/python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
moto_log=$(mktemp)
"$venv/bin/moto_server" -H 127.0.0.1 -p "$port" >"$moto_log" 2>&1 &
moto_pid=$!
trap 'kill $moto_pid 2>/dev/null || true; rm -f "$moto_log"' EXIT

for _ in $(seq 1 100); do
  if "$venv/bin/python" -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/moto-api/')" 2>/dev/null; then
    break
  fi
  if ! kill -0 "$moto_pid" 2>/dev/null; then
    echo "moto_server did not start:" >&2
    cat "$moto_log" >&2
    exit 1
  fi
  sleep 0.2
done
echo "==> AWS emulator (moto) on 127.0.0.1:$port"

export MYAO_TEST_AWS_ENDPOINT="http://127.0.0.1:$port"
export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_REGION=us-east-1 AWS_DEFAULT_REGION=us-east-1
export AWS_EC2_METADATA_DISABLED=true
