"""Ways in from other schedulers: each turns its source into an app manifest (SPEC §5).

| module                  | source                                          | command                                 |
|-------------------------|-------------------------------------------------|-----------------------------------------|
| ``celery_beat``         | a Celery app's ``beat_schedule``                | ``cronplane import celery-beat``        |
| ``django_celery_beat``  | django-celery-beat's tables, read-only          | ``cronplane import django-celery-beat`` |
| ``crontab``             | a user crontab, ``/etc/crontab``, ``cron.d``    | ``cronplane import crontab``            |
| ``kubernetes``          | ``batch/v1`` CronJob manifests                  | ``cronplane import kubernetes``         |
| ``temporal`` (+ ``temporal_spec``) | Temporal schedules (describe/list JSON, or the SDK) | ``cronplane import temporal`` |

Every importer is a function of values returning a :class:`~.translation.Translation`
(the manifest document, every entry it could not translate with the reason,
and notes on what changed meaning); reading the source is the only I/O.
Nothing is dropped silently, and one entry never sinks the others:
:func:`~.translation.usable` lists whatever `app install` would refuse, so what
is written installs.
"""
