#!/usr/bin/env bash
# Install the example app and run cronplane (dispatcher + workers) in this process.
#   CRONPLANE_DATABASE_URL=sqlite:///var/cronplane.db bash examples/run.sh
# `make run` does exactly that. Ctrl-C stops; the schedules fire every minute.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
bin="${CRONPLANE_BIN:-$root/.venv/bin}"
export CRONPLANE_DATABASE_URL="${CRONPLANE_DATABASE_URL:-sqlite:///$root/var/cronplane.db}"
# The handlers (python:demo_jobs.billing:…) must import in the worker.
export PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}"

"$bin/cronplane" db upgrade
"$bin/cronplane" --stack demo app install "$here/app.yaml"
"$bin/cronplane" --stack demo schedule ls
# A console sign-in for this run: an admin token of the default tenant, shown once.
token="$("$bin/cronplane" token create --tenant default --role admin --name make-run | tail -n 1)"
echo "cronplane: firing the demo schedules every minute; watch the worker's log lines."
echo "console:   http://127.0.0.1:8080/  (sign in with this token: $token)"
exec "$bin/cronplane" serve "$@"
