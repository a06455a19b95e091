"""The SPEC §5 example app manifest, shared by the tests that load, sync and install it."""

SPEC_MANIFEST = """
name: billing
jobs:
  send-invoices:
    title: Submit pending e-invoices
    target: python:billing.jobs:send_invoices
    payload: {batch: 100}
    schema: {type: object, properties: {batch: {type: integer}}}
  build-report:  {title: Build a report, target: "python:billing.jobs:build_report"}
crons:
  send-invoices: "*/15 * * * *"
  nightly-report:
    job: build-report
    cron: "at 02:30"
    timezone: Europe/London
    payload: {kind: daily}
"""
