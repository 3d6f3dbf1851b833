import pino, { Logger } from 'pino';

export type { Logger };

/** Paths that may hold a key or token; pino replaces their values before a line is written. */
const REDACT = [
  'apiKey',
  '*.apiKey',
  'api_key',
  '*.api_key',
  'headers.api_key',
  'headers.authorization',
  '*.headers.api_key',
  '*.headers.authorization',
  'adminToken',
  '*.adminToken',
];

export function createLogger(level: string, name: string): Logger {
  return pino({
    level,
    base: { service: name, pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACT, censor: '[REDACTED]' },
  });
}

/** A URL safe to log: any api_key query value is replaced. */
export function redactUrl(url: string): string {
  return url.replace(/([?&]api_key=)[^&#]*/gi, '$1[REDACTED]');
}
