import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * The API node's Prometheus metrics, one registry per node (several nodes can share a process
 * in tests). Served at GET /metrics.
 */
export interface ApiMetrics {
  registry: Registry;
  /** Event streams open on this node. */
  streamsOpen: Gauge;
  /** Location events this node received from Redis pub/sub, by type. */
  eventsReceived: Counter<'type'>;
  /** Events written to streams (one per stream), by type. */
  eventsDelivered: Counter<'type'>;
  /** Location events this node published (orders and commands it created), by type. */
  eventsPublished: Counter<'type'>;
}

export function createApiMetrics(): ApiMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return {
    registry,
    streamsOpen: new Gauge({ name: 'pos_streams_open', help: 'Event streams open on this node', registers: [registry] }),
    eventsReceived: new Counter({
      name: 'pos_events_received_total',
      help: 'Location events received from Redis pub/sub',
      labelNames: ['type'],
      registers: [registry],
    }),
    eventsDelivered: new Counter({
      name: 'pos_events_delivered_total',
      help: 'Events written to streams, one per stream',
      labelNames: ['type'],
      registers: [registry],
    }),
    eventsPublished: new Counter({
      name: 'pos_events_published_total',
      help: 'Location events published by this node',
      labelNames: ['type'],
      registers: [registry],
    }),
  };
}
