/**
 * BullMQ's telemetry through `bullmq-otel` (its context propagation and span wrapper), with
 * three changes:
 *
 * - A job's processing is a trace of its own, linked to the trace that queued it, never its
 *   child: a job outlives its request (a re-run after a stalled worker, a retry, a scheduled
 *   lifecycle run, a webhook delivery), and as children they would reopen, or extend without end,
 *   the trace of the request (bullmq issues 2942 and 4731).
 * - The context manager has `root()`, so that BullMQ runs its background loops (the stalled-job
 *   checker) detached from whatever context started the worker.
 * - Only what a trace needs is recorded: a span with no parent is kept only when it queues or
 *   processes a job (not the fetch and check loops' ticks); job results and options, which carry
 *   order records, are never attributes.
 */
import {
  context,
  ROOT_CONTEXT,
  SpanKind as OtelKind,
  SpanStatusCode,
  trace,
  type Context,
  type SpanContext,
  type Span as OtelSpan,
} from '@opentelemetry/api';
import {
  SpanKind,
  type Attributes,
  type AttributeValue,
  type ContextManager,
  type Exception,
  type Span,
  type Telemetry,
  type Time,
} from 'bullmq';
import { BullMQOtel, BullMQOTelSpan } from 'bullmq-otel';

/** BullMQ attributes that may hold order data (a job's return value, its options) or keys. */
const DROPPED = new Set([
  'bullmq.job.result',
  'bullmq.job.options',
  'bullmq.job.deduplication.key',
  'bullmq.queue.options',
  'bullmq.worker.options',
]);

const KINDS: Record<SpanKind, OtelKind> = {
  [SpanKind.INTERNAL]: OtelKind.INTERNAL,
  [SpanKind.SERVER]: OtelKind.SERVER,
  [SpanKind.CLIENT]: OtelKind.CLIENT,
  [SpanKind.PRODUCER]: OtelKind.PRODUCER,
  [SpanKind.CONSUMER]: OtelKind.CONSUMER,
};

/** Where fromMetadata leaves the producer's span context, for the consumer span to link to. */
const PRODUCER = Symbol.for('pos.bullmq.producer');

function kept(attributes: Attributes | undefined): Attributes | undefined {
  if (!attributes) return attributes;
  return Object.fromEntries(Object.entries(attributes).filter(([key]) => !DROPPED.has(key)));
}

/** bullmq-otel's span, minus the dropped attributes; an exception also marks the span failed. */
class FilteredSpan extends BullMQOTelSpan {
  override setAttribute(key: string, value: AttributeValue): void {
    if (!DROPPED.has(key)) super.setAttribute(key, value);
  }
  override setAttributes(attributes: Attributes): void {
    super.setAttributes(kept(attributes)!);
  }
  override addEvent(name: string, attributes?: Attributes, time?: Time): void {
    super.addEvent(name, kept(attributes), time);
  }
  override recordException(exception: Exception, time?: Time): void {
    super.recordException(exception, time);
    this.span.setStatus({ code: SpanStatusCode.ERROR });
  }
}

/** A span not recorded: nothing is set on the context, so what runs in it is not traced either. */
const UNRECORDED: Span<Context> = {
  setSpanOnContext: (ctx) => ctx,
  setAttribute: () => undefined,
  setAttributes: () => undefined,
  addEvent: () => undefined,
  recordException: () => undefined,
  end: () => undefined,
};

export function bullmqTelemetry(): Telemetry<Context> {
  const otel = new BullMQOtel({ tracerName: 'bullmq' });
  const propagation = otel.contextManager;
  const tracer = trace.getTracer('bullmq');
  const contextManager: ContextManager<Context> = {
    with: (ctx, fn) => context.with(ctx, fn),
    active: () => context.active(),
    root: () => ROOT_CONTEXT,
    getMetadata: (ctx) => propagation.getMetadata(ctx),
    fromMetadata(activeContext, metadata) {
      const producer = trace.getSpanContext(propagation.fromMetadata(ROOT_CONTEXT, metadata));
      return producer ? activeContext.setValue(PRODUCER, producer) : activeContext;
    },
  };
  return {
    contextManager,
    tracer: {
      startSpan(name, options, ctx = context.active()) {
        const kind = options?.kind ?? SpanKind.INTERNAL;
        const producer = ctx.getValue(PRODUCER) as SpanContext | undefined;
        const queuesOrProcesses = kind === SpanKind.PRODUCER || kind === SpanKind.CONSUMER;
        let span: OtelSpan;
        if (producer && queuesOrProcesses) {
          span = tracer.startSpan(name, { kind: KINDS[kind], root: true, links: [{ context: producer }] }, ctx);
        } else if (trace.getSpan(ctx) || queuesOrProcesses) {
          span = tracer.startSpan(name, { kind: KINDS[kind] }, ctx);
        } else return UNRECORDED;
        return new FilteredSpan(span);
      },
    },
  };
}
