"""`manage.py soak`: the real processes under agents' load, faults and killed workers.

It starts gunicorn, Celery workers and beat itself on the configured database engine and
broker, in a scratch database and var directory (the user's estate is never touched), loads
the demo estate, runs agents that reconcile and commit through the Python client while the
sandbox owner misbehaves, drains, and checks what must hold: no 5xx from the product, no
effect lost or applied twice, every accepted effect read back, memory per process flat.

- `processes`: start, kill, restart and stop the servers; resident memory per process.
- `estate`: the scratch database and var directory, the demo estate, agents, an operator.
- `agents`: the load (asyncio + httpx through `reconcile_client`), and the faults.
- `traffic`: what every request answered, and what each commit's answer said.
- `checks`: the invariants, pure functions of what was collected.
- `report`: the printed report.
- `run`: the whole run, in order.
"""
