"""A node over several shards: a Node per shard, leading about its share of them.

Each shard's Node is today's (dispatcher, workers, alert loop over that
shard's database); its dispatcher competes for that shard's lease with a
:class:`ShardSeat`, which lets it take a lease while this node leads fewer
than its share, ``ceil(shards / live nodes)`` (core.shards), and gives one
back at renewal while it leads more. The balancer beats in the control
database (so other nodes count this one), recounts the live nodes and picks
up shards added since; a node that stops says so, and the others' share
grows at once.
"""

from __future__ import annotations

import logging
import threading
from datetime import datetime, timedelta

from sqlalchemy.exc import SQLAlchemyError

from cronplane.clock import Clock
from cronplane.core import shards as rules
from cronplane.processes.dispatch_reports import default_holder
from cronplane.processes.node import Node, NodeOptions, clock_for
from cronplane.store import shard_map
from cronplane.store.shard_databases import ShardDatabases

log = logging.getLogger(__name__)


class ShardSeats:
    """This node's share of shard leases, and which shards it leads now."""

    def __init__(self, ttl: timedelta) -> None:
        self.ttl = ttl
        self.share = rules.Share(1, 1)
        self.nodes: dict[str, Node] = {}

    def held(self) -> list[str]:
        """The shards whose lease this node holds (as its dispatchers believe)."""
        return [
            name
            for name, node in self.nodes.items()
            if node.dispatcher is not None and node.dispatcher.is_leader
        ]

    def seat(self, shard: str) -> ShardSeat:
        return ShardSeat(self, shard)


class ShardSeat:
    """One shard's dispatcher's view of its node's share (processes.leadership.Seat)."""

    def __init__(self, seats: ShardSeats, shard: str) -> None:
        self.seats = seats
        self.shard = shard

    def may_take(self, expired_for: timedelta | None) -> bool:
        held = len(self.seats.held())
        return rules.may_take(held, self.seats.share, expired_for, self.seats.ttl)

    def must_yield(self) -> bool:
        return self.shard in rules.to_give_back(self.seats.held(), self.seats.share)


class ShardNode:
    """A Node per shard, balanced against the other nodes through the control database."""

    def __init__(
        self,
        databases: ShardDatabases,
        options: NodeOptions,
        clock: Clock | None = None,
        *,
        holder: str | None = None,
    ) -> None:
        self.databases = databases
        self.options = options
        self._clock = clock
        self.control_clock = clock or clock_for(databases.control)
        self.holder = holder or default_holder()
        self.seats = ShardSeats(timedelta(seconds=options.ttl))
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._started = False
        self.balance()

    @property
    def nodes(self) -> dict[str, Node]:
        """Each shard's Node, by shard name."""
        return self.seats.nodes

    def balance(self) -> rules.Share:
        """Beat (a dispatching node), read what every live node leads, reach new shards;
        this node's share."""
        now = self.control_clock.now()
        with self.databases.control.begin() as conn:
            # Only a node that competes for leases counts among the leaders: a worker-only
            # node counted would shrink every dispatcher's share and leave shards unled.
            if self.options.dispatcher:
                shard_map.beat(conn, self.holder, now, len(self.seats.held()))
            leads = shard_map.live_leads(conn, now, self.seats.ttl)
        names = [shard.name for shard in self.databases.shards()]
        for name in names:
            if name not in self.nodes:
                self._add(name)
        self.seats.share = rules.fair_share(len(names), leads)
        return self.seats.share

    def _add(self, name: str) -> None:
        database = self.databases.database(name)
        node = Node(
            database,
            self.options,
            self._clock or clock_for(database),
            holder=f"{self.holder}/{name}",
            seat=self.seats.seat(name),
            shard=name,
        )
        self.nodes[name] = node
        if self._started:
            node.start()
        log.info("node %s reaches shard %r", self.holder, name)

    def tick(self) -> dict[str, bool]:
        """One balancing round and one tick of every shard's dispatcher (tests; `--once`)."""
        self.balance()
        return {
            name: node.dispatcher.tick().leader
            for name, node in self.nodes.items()
            if node.dispatcher is not None
        }

    @property
    def clock(self) -> Clock:
        """Now as the control database sees it (the API's clock beside this node)."""
        return self._clock or self.control_clock

    def wake(self) -> None:
        """A schedule changed in this process: wake every shard's dispatcher."""
        for node in self.nodes.values():
            node.wake()

    def wake_workers(self, at: datetime | None = None) -> None:
        """An item was enqueued in this process: wake every shard's workers."""
        for node in self.nodes.values():
            node.wake_workers(at)

    def start(self) -> None:
        """Start every shard's Node, and the balancer, in daemon threads."""
        self._started = True
        for node in self.nodes.values():
            node.start()
        self._thread = threading.Thread(
            target=self._balance_loop, name="cronplane-shards", daemon=True
        )
        self._thread.start()

    def _balance_loop(self) -> None:
        interval = self.seats.ttl.total_seconds() / 3
        while not self._stop.wait(interval):
            try:
                self.balance()
            except (SQLAlchemyError, OSError) as error:  # control database away: keep the share
                log.warning("shard balancing failed: %s", error)

    def stop(self, timeout: float = 30.0) -> None:
        """Stop every shard's Node (each releases its lease) and leave the node list."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
        for node in self.nodes.values():
            node.stop(timeout)
            if not self._started and node.dispatcher is not None:
                node.dispatcher.release()  # ticked by hand (`tick`): no run loop releases it
        try:
            with self.databases.control.begin() as conn:
                shard_map.forget(conn, self.holder)
        except (SQLAlchemyError, OSError) as error:  # the others count it out after a TTL
            log.warning("could not leave the node list: %s", error)
