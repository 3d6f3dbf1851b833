/**
 * The OpenTelemetry SDK, loaded by startTracing (tracing.ts) only when tracing is on. The SDK reads
 * the standard OTEL_* variables itself (exporter, protocol, sampler, headers, batching); this
 * module chooses the instrumentations and keeps secrets and order data out of the spans.
 */
import {
  context,
  isSpanContextValid,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Span,
} from '@opentelemetry/api';
import { getRPCMetadata, RPCType } from '@opentelemetry/core';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { MongoDBInstrumentation } from '@opentelemetry/instrumentation-mongodb';
import { NodeSDK } from '@opentelemetry/sdk-node';
import type { TelemetryConfig } from '../config';
import { bullmqTelemetry } from './bullmq-telemetry';
import { STREAM_PATH, type OpenSpan, type SpanFields, type Tracing } from './tracing-api';

/** Probes and scrapes: requests with no server span (noise), like event streams (see STREAM_PATH). */
const PROBE_PATH = /^\/(?:healthz|readyz|metrics)$/;

function untraced(url = ''): boolean {
  const path = url.split('?')[0]!;
  return PROBE_PATH.test(path) || STREAM_PATH.test(path);
}

/** Query parameters that may carry a key, replaced in the URL attributes of a server span. */
const SECRET_QUERY_PARAMS = ['api_key', 'apikey', 'token', 'access_token', 'key', 'sig', 'signature'];

function fieldsOf(fields: SpanFields): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) out[key] = value;
  return out;
}

function endWith(span: Span, err?: unknown): void {
  if (err !== undefined) {
    span.recordException(err instanceof Error ? err : String(err));
    span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
}

async function runIn<T>(span: Span, parent: typeof ROOT_CONTEXT, run: () => Promise<T>): Promise<T> {
  try {
    const result = await context.with(trace.setSpan(parent, span), run);
    endWith(span);
    return result;
  } catch (err) {
    endWith(span, err);
    throw err;
  }
}

/** What is traced: HTTP, MongoDB and Redis, each holding no key, token or order data. */
function instrumentations() {
  return [
    new HttpInstrumentation({
      ignoreIncomingRequestHook: (request) => untraced(request.url),
      requireParentforOutgoingSpans: true,
      redactedQueryParamsServer: SECRET_QUERY_PARAMS,
      // No header becomes an attribute (the default, said here because keys travel in headers).
      headersToSpanAttributes: {
        server: { requestHeaders: [], responseHeaders: [] },
        client: { requestHeaders: [], responseHeaders: [] },
      },
    }),
    new MongoDBInstrumentation({
      requireParentSpan: true,
      enhancedDatabaseReporting: false,
      // The command's shape, every value `?`: filters and documents hold order rows and key hashes.
      dbStatementSerializer: (command) =>
        JSON.stringify(command, (_key, value: unknown) => (typeof value === 'object' && value !== null ? value : '?')),
    }),
    new IORedisInstrumentation({
      requireParentSpan: true,
      // The command only: arguments hold session keys, job data and replies.
      dbStatementSerializer: (command) => command,
    }),
  ];
}

export function startSdk(config: TelemetryConfig, serviceName: string): Tracing {
  // Traces only: the metrics are prom-client's on /metrics, the logs pino's on stdout.
  process.env.OTEL_METRICS_EXPORTER ??= 'none';
  process.env.OTEL_LOGS_EXPORTER ??= 'none';
  const sdk = new NodeSDK({ serviceName: config.serviceName ?? serviceName, instrumentations: instrumentations() });
  sdk.start();

  const tracer = trace.getTracer('pos');
  const bullmq = bullmqTelemetry();
  return {
    bullmq,
    logFields() {
      const span = trace.getSpan(context.active());
      if (!span) return {};
      const { traceId, spanId } = span.spanContext();
      return isSpanContextValid(span.spanContext()) ? { trace_id: traceId, span_id: spanId } : {};
    },
    nameRoute(method, route) {
      const active = context.active();
      const metadata = getRPCMetadata(active);
      // read by the http instrumentation when the response ends: http.route, and the span's name
      if (metadata?.type === RPCType.HTTP) metadata.route = route;
      else trace.getSpan(active)?.updateName(`${method} ${route}`).setAttribute('http.route', route);
    },
    annotate(fields) {
      trace.getSpan(context.active())?.setAttributes(fieldsOf(fields));
    },
    inSpan(name, fields, run) {
      const parent = context.active();
      return runIn(tracer.startSpan(name, { attributes: fieldsOf(fields) }, parent), parent, run);
    },
    startSpan(name, fields, options): OpenSpan {
      const span = tracer.startSpan(name, { attributes: fieldsOf(fields), root: options?.root });
      return {
        end(more) {
          if (more) span.setAttributes(fieldsOf(more));
          span.end();
        },
      };
    },
    serverSpan(headers, name, fields, run) {
      const parent = propagation.extract(ROOT_CONTEXT, headers);
      return runIn(
        tracer.startSpan(name, { kind: SpanKind.SERVER, attributes: fieldsOf(fields) }, parent),
        parent,
        run,
      );
    },
    shutdown: () => sdk.shutdown(),
  };
}
