"""The HTTP API edge: FastAPI routes over the service, one module per noun.

`cronplane.api.app.create_app(database, clock)` builds the application;
`cronplane.api.metrics` is importable without FastAPI (the dispatcher and
worker report through it). Layout::

    app.py       the factory: context, middleware, error handlers, routers
    context.py   what every route reaches: database, clock, services, limits
    auth.py      bearer tokens -> Principal; the per-route access rule
    direct.py    the create route's short way past FastAPI's generic handling
    grouping.py  group commit: concurrent single creates share a transaction
    errors.py    every failure -> {"code","message","detail"} with its status
    limits.py    request body size and JSON depth, before any parsing
    metrics.py   Prometheus: fires, skips, lateness, leader, queue, worker, HTTP
    schemas.py   request and response models (extra fields refused)
    schedules.py jobs.py sync.py queue.py events.py cron.py health.py  routes
"""
