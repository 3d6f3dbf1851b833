/**
 * Every environment variable the service reads, as JSON Schema, grouped by the section of the
 * configuration it feeds: the one definition of the configuration. `loadConfig` (config.ts)
 * validates the environment with it and derives its types from it; `docs/configuration.md` is
 * generated from it (scripts/docs/configuration.ts). Each variable carries its description, and
 * either its `default` or, in `unset`, what its absence means. The sections are written in
 * config/, in four groups.
 */
import { ACCESS_SECTIONS } from './config/access';
import { OPERATIONS_SECTIONS } from './config/operations';
import { ORDERS_SECTIONS } from './config/orders';
import { SERVING_SECTIONS } from './config/serving';
import { constant } from './config/variable';

export { type ConfigSection, type ConfigVariable, DURATION_PATTERN, FLAG_VALUES } from './config/variable';

/** The sections, in the order the docs list them; each becomes `config.<section>`. */
export const CONFIG_SECTIONS = { ...SERVING_SECTIONS, ...ACCESS_SECTIONS, ...ORDERS_SECTIONS, ...OPERATIONS_SECTIONS };

export type SectionName = keyof typeof CONFIG_SECTIONS;

/** The environment as one JSON Schema object: every section's variables, and nothing else. */
export const envSchema = constant({
  type: 'object',
  additionalProperties: false,
  properties: {
    ...CONFIG_SECTIONS.http.variables,
    ...CONFIG_SECTIONS.mongo.variables,
    ...CONFIG_SECTIONS.redis.variables,
    ...CONFIG_SECTIONS.queue.variables,
    ...CONFIG_SECTIONS.overload.variables,
    ...CONFIG_SECTIONS.worker.variables,
    ...CONFIG_SECTIONS.auth.variables,
    ...CONFIG_SECTIONS.limits.variables,
    ...CONFIG_SECTIONS.streams.variables,
    ...CONFIG_SECTIONS.idempotency.variables,
    ...CONFIG_SECTIONS.orders.variables,
    ...CONFIG_SECTIONS.lifecycle.variables,
    ...CONFIG_SECTIONS.presence.variables,
    ...CONFIG_SECTIONS.menus.variables,
    ...CONFIG_SECTIONS.orderDeadlines.variables,
    ...CONFIG_SECTIONS.telemetry.variables,
    ...CONFIG_SECTIONS.webhooks.variables,
    ...CONFIG_SECTIONS.audit.variables,
    ...CONFIG_SECTIONS.process.variables,
  },
});
