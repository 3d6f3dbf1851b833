import { Counter, Registry } from 'prom-client';

/**
 * `pos_mongo_commands_total`: MongoDB commands (round trips) this process has sent, read from
 * the store's count at scrape time. The API and the worker both serve it.
 */
export function mongoCommandsCounter(registry: Registry, count: () => number): Counter {
  return new Counter({
    name: 'pos_mongo_commands_total',
    help: 'MongoDB commands (round trips) this process has sent',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(count());
    },
  });
}
