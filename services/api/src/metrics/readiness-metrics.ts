import { Gauge, Registry } from 'prom-client';
import type { Readiness } from '../health/readiness';
import { scrapeRead } from './scrape-read';

/**
 * `pos_ready` and `pos_dependency_up`: what /readyz would answer, checked at scrape time (one
 * check per scrape, shared by both gauges), so that an alert sees a node that is up but not
 * ready, and which dependency it cannot reach, without a probe of its own.
 */
export function registerReadinessMetrics(registry: Registry, check: () => Promise<Readiness>): void {
  const readiness = scrapeRead(check);
  new Gauge({
    name: 'pos_ready',
    help:
      'Whether this node is ready (1) or not (0), as /readyz answers: MongoDB and ' +
      'Redis answer, subscriptions in place, not shutting down',
    registers: [registry],
    async collect() {
      this.set((await readiness()).ready ? 1 : 0);
    },
  });
  new Gauge({
    name: 'pos_dependency_up',
    help:
      'Whether this node reaches a dependency (1) or not (0): mongodb, redis (0 ' +
      'too while its pub/sub subscriptions are being restored)',
    labelNames: ['dependency'],
    registers: [registry],
    async collect() {
      const { mongo, redis } = await readiness();
      this.set({ dependency: 'mongodb' }, mongo === 'ok' ? 1 : 0);
      this.set({ dependency: 'redis' }, redis === 'ok' ? 1 : 0);
    },
  });
}
