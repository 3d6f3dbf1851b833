/**
 * Imported first by main.ts: with tracing on, the OpenTelemetry SDK must be in place before the
 * modules it instruments (http, mongodb, ioredis) are loaded.
 */
import { loadConfig } from '@pos/shared/config';
import { startTracing } from '@pos/shared/telemetry/tracing';

startTracing(loadConfig().telemetry, 'pos-worker');
