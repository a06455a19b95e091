"""Handlers of the example app (examples/app.yaml); examples/run.sh puts this on PYTHONPATH."""
