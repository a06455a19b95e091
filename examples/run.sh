#!/usr/bin/env bash
# Install the example app and run cronplane (API, console, dispatcher, workers) in this process.
#   CRONPLANE_DATABASE_URL=sqlite:///var/cronplane.db HOST=127.0.0.1 PORT=8080 bash examples/run.sh
# `make run` does exactly that (`make run PORT=9000 HOST=0.0.0.0` to change where it listens).
# Ctrl-C stops; two of the schedules fire every minute.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
bin="${CRONPLANE_BIN:-$root/.venv/bin}"
host="${HOST:-127.0.0.1}"
port="${PORT:-8080}"
export CRONPLANE_DATABASE_URL="${CRONPLANE_DATABASE_URL:-sqlite:///$root/var/cronplane.db}"
# The handlers (python:demo_jobs.billing:…) must import in the worker.
export PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}"

# Webhook secrets and alert channels need a deployment key: made once, kept in var/
# (mode 600), so sealed secrets still open on the next run. An exported key wins.
if [ -z "${CRONPLANE_SECRET_KEY:-}" ]; then
  key_file="${CRONPLANE_SECRET_KEY_FILE:-$root/var/secret-key}"
  if [ ! -s "$key_file" ]; then
    mkdir -p "$(dirname "$key_file")"
    (umask 077 && "$bin/python" -c 'import secrets; print(secrets.token_urlsafe(32))' >"$key_file")
    echo "cronplane: made a secret key in $key_file (keep it: sealed secrets need it)"
  fi
  CRONPLANE_SECRET_KEY="$(cat "$key_file")"
  export CRONPLANE_SECRET_KEY
fi

"$bin/cronplane" db upgrade
"$bin/cronplane" --stack demo app install "$here/app.yaml"
"$bin/cronplane" --stack demo schedule ls
# A console sign-in for this run: an admin token of the tenant the example app
# lives in (`default`), shown once.
token="$("$bin/cronplane" token create --tenant default --role admin --name make-run | tail -n 1)"
# 0.0.0.0 and :: listen everywhere; a browser reaches them on loopback.
case "$host" in
  0.0.0.0 | "::" | "[::]") shown=127.0.0.1 ;;
  *:*) shown="[$host]" ;;
  *) shown="$host" ;;
esac
echo "cronplane: firing the demo schedules every minute; watch the worker's log lines."
echo "console:   http://$shown:$port/  (sign in with this token: $token)"
exec "$bin/cronplane" serve --host "$host" --port "$port" "$@"
