/**
 * What tracing offers the rest of the code (tracing.ts holds the process's instance; sdk.ts makes
 * it): types and constants only, so that nothing of OpenTelemetry is loaded through them.
 */
import type { Telemetry } from 'bullmq';

/**
 * Event streams (`…/stream`), whose server span would last as long as the stream: the http
 * instrumentation leaves them alone, and their opening gets a span of its own (serverSpan).
 */
export const STREAM_PATH = /\/stream$/;

/** Attribute values we record: ids, numbers, names and statuses, never keys, tokens or order rows. */
export type SpanFields = Record<string, string | number | boolean | undefined>;

/** A span begun by our own code; `end` may add fields (an outcome) first. */
export interface OpenSpan {
  end(fields?: SpanFields): void;
}

export interface Tracing {
  /** For every BullMQ Queue and Worker (see queueTelemetry in queue/telemetry.ts). */
  readonly bullmq: Telemetry;
  /** The pino mixin: `trace_id` and `span_id` of the active span on every line logged within it. */
  logFields(): object;
  /** Names the active server span by its route: `PUT /api/v1/orders/{number}/statusupdate`. */
  nameRoute(method: string, route: string): void;
  /** Adds fields to the active span. */
  annotate(fields: SpanFields): void;
  /** A span under the active one, made active for `run`, ended when `run` settles. */
  inSpan<T>(name: string, fields: SpanFields, run: () => Promise<T>): Promise<T>;
  /**
   * A span under the active one, or with `root` a trace of its own (work that no request of this
   * process caused), left to the caller to end.
   */
  startSpan(name: string, fields: SpanFields, options?: { root?: boolean }): OpenSpan;
  /**
   * A server span for a request the http instrumentation leaves alone (an event stream, which
   * would hold its span for its whole life): under the caller's `traceparent`, ended when `run` settles.
   */
  serverSpan<T>(
    headers: Record<string, string | string[] | undefined>,
    name: string,
    fields: SpanFields,
    run: () => Promise<T>,
  ): Promise<T>;
  /** Sends the spans still buffered; at shutdown. */
  shutdown(): Promise<void>;
}
