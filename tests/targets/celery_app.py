"""The user's Celery project, as the celery tests see it: one task that writes down its call.

The broker comes from CELERY_TEST_BROKER_URL and the output directory from
CELERY_TEST_OUT, both set by the test that starts `celery worker` on this app.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from celery import Celery

app = Celery("cronplane_test", broker=os.environ.get("CELERY_TEST_BROKER_URL", "memory://"))
app.conf.update(
    broker_connection_retry_on_startup=True,
    worker_hijack_root_logger=False,
    task_serializer="json",
    accept_content=["json"],
)


@app.task(name="cronplane_test.record", bind=True)
def record(self: Any, *args: Any, **kwargs: Any) -> None:
    """Write args, kwargs and cronplane's context header to <out>/<task id>.json."""
    out = Path(os.environ["CELERY_TEST_OUT"])
    document = {
        "task_id": self.request.id,
        "args": list(args),
        "kwargs": kwargs,
        "cronplane": getattr(self.request, "cronplane", None),
        # A header of the job's own (options.headers) arrives beside cronplane's.
        "origin": getattr(self.request, "origin", None),
        # (hard, soft) time limits the message carried: cronplane's item timeout.
        "timelimit": list(self.request.timelimit or ()),
    }
    partial = out / f"{self.request.id}.part"
    partial.write_text(json.dumps(document))
    partial.rename(out / f"{self.request.id}.json")  # the reader never sees half a file
