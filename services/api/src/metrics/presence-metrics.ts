import { Counter, Gauge, Registry } from 'prom-client';
import { overdueCountKey } from '@pos/shared/queue/order-deadlines';
import type { RedisClient } from '@pos/shared/redis';
import type { LocationsRepo } from '@pos/shared/store/locations';
import { boundedRead, scrapeRead } from './scrape-read';

/**
 * Presence and deadlines, read at scrape time: the locations online and paused (two counts in
 * MongoDB, whose documents the worker's sweep keeps), and the orders marked overdue (a count the
 * worker keeps in Redis: each order once, on whichever worker). Figures of the deployment, the
 * same on every node (aggregate with `max`).
 */
export function registerPresenceMetrics(
  registry: Registry,
  sources: { locations: Pick<LocationsRepo, 'counts'>; redis: Pick<RedisClient, 'get'>; prefix: string },
): void {
  const registers = [registry];
  const counts = scrapeRead(() => boundedRead(sources.locations.counts(new Date()), 'location counts'));
  new Gauge({
    name: 'pos_locations_online',
    help:
      'Locations online: a register holds a stream or made a request ' +
      'within PRESENCE_WINDOW (as the sweep last announced)',
    registers,
    async collect() {
      this.reset();
      const c = await counts();
      if (c) this.set(c.online);
    },
  });
  new Gauge({
    name: 'pos_locations_paused',
    help: 'Locations paused now: customers are refused',
    registers,
    async collect() {
      this.reset();
      const c = await counts();
      if (c) this.set(c.paused);
    },
  });
  new Counter({
    name: 'pos_orders_overdue_total',
    help: 'Placements of orders that went past their order deadline, across all workers (each once)',
    registers,
    async collect() {
      this.reset();
      const value = await boundedRead(sources.redis.get(overdueCountKey(sources.prefix)), 'overdue count');
      this.inc(Number(value ?? 0));
    },
  });
}
