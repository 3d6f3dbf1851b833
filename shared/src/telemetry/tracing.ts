/**
 * Whether this process traces, and what tracing offers the rest of the code. The OpenTelemetry
 * SDK (sdk.ts) is loaded only when the configuration turns tracing on, and before the modules it
 * instruments (http, mongodb, ioredis): each entry point imports its `tracing.ts` first. Off,
 * `tracing()` is undefined and callers skip their few lines, so that nothing of it is loaded or run.
 */
import type { TelemetryConfig } from '../config';
import type { SpanFields, Tracing } from './tracing-api';

export { STREAM_PATH, type OpenSpan, type SpanFields, type Tracing } from './tracing-api';

let active: Tracing | undefined;

/** The process's tracing, or undefined when it is off. */
export function tracing(): Tracing | undefined {
  return active;
}

/**
 * Starts the SDK when the configuration turns tracing on; `serviceName` unless OTEL_SERVICE_NAME
 * names the process. Synchronous, so that the instrumentation is in place before the next import.
 */
export function startTracing(config: TelemetryConfig, serviceName: string): Tracing | undefined {
  if (!config.tracing || active) return active;
  // A synchronous require: an `import()` would resolve after the instrumented modules have loaded.
  const sdk = require('./sdk') as typeof import('./sdk');
  active = sdk.startSdk(config, serviceName);
  return active;
}

/** Adds fields to the active span, when tracing is on. */
export function annotate(fields: SpanFields): void {
  active?.annotate(fields);
}

/** Runs `run` in a span of its own when tracing is on; else just runs it. */
export function traced<T>(name: string, fields: SpanFields, run: () => Promise<T>): Promise<T> {
  return active ? active.inSpan(name, fields, run) : run();
}
