import pino, { DestinationStream, Logger } from 'pino';
import { tracing } from './telemetry/tracing';

export type { Logger };

/** Where log lines go instead of stdout: anything with `write(line)`. */
export type LogDestination = DestinationStream;

/** Fields that may hold a key or token. */
const SECRETS = ['apiKey', 'api_key', 'adminToken', 'apiKeySecret', 'apiKeySecretPrevious'];
/** Objects logged whole, whose fields may be secrets. */
const HOLDERS = ['err', 'audit', 'body', 'config', 'session', 'job'];
/**
 * Paths pino replaces before a line is written: the secrets at the top, within the objects logged
 * whole, and the headers that carry credentials. Each path names its first field: a path that
 * begins with a wildcard makes pino clone and rewrite every field of every line (and of every
 * child logger's bindings), some 25 KB of garbage per request.
 */
const REDACT = [
  ...SECRETS,
  ...HOLDERS.flatMap((holder) => SECRETS.map((secret) => `${holder}.${secret}`)),
  ...['headers', 'req.headers'].flatMap((headers) => [`${headers}.api_key`, `${headers}.authorization`]),
];

/**
 * JSON lines on stdout, or on `destination` when one is given (`npm start` on a terminal). Made
 * after startTracing, so that with tracing on its lines carry the active span's ids.
 */
export function createLogger(level: string, name: string, destination?: LogDestination): Logger {
  const options = {
    level,
    base: { service: name, pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACT, censor: '[REDACTED]' },
    // with tracing on, every line logged within a span names it (trace_id, span_id)
    mixin: tracing()?.logFields,
  };
  return destination ? pino(options, destination) : pino(options);
}

/** Lines wait for others up to this many bytes, then are written together. */
const LOG_BUFFER_BYTES = 4096;

/**
 * Stdout, written in batches: a line waits up to `flushMs` (or until 4 KiB wait) to share one
 * write with others, since a write costs tens to hundreds of microseconds of CPU and an access
 * line per request would otherwise cost one each. Whatever waits is written on exit (pino flushes
 * an asynchronous destination then); a SIGKILL loses at most `flushMs` of lines. `0` writes each
 * line at once (pino's default).
 */
export function stdoutLog(flushMs: number): LogDestination | undefined {
  return flushMs > 0 ? batchedDestination(1, flushMs) : undefined;
}

/**
 * Lines written to `fd` in batches (see stdoutLog), flushed every `flushMs` when some wait.
 * Not sonic-boom's own `periodicFlush`: that one writes an empty buffer when none waits, a write on
 * the thread pool and two wake-ups five times a second in an idle process.
 */
export function batchedDestination(fd: number, flushMs: number): ReturnType<typeof pino.destination> {
  const destination = pino.destination({ dest: fd, sync: false, minLength: LOG_BUFFER_BYTES });
  // the bytes given to it and not yet written (it counts them too, but privately)
  let waiting = 0;
  const write = destination.write.bind(destination);
  destination.write = (line: string) => {
    waiting += Buffer.byteLength(line);
    return write(line);
  };
  destination.on('write', (written: number) => (waiting = Math.max(0, waiting - written)));
  const flushes = setInterval(() => {
    if (waiting === 0) return;
    try {
      destination.flush();
    } catch {
      // destroyed, its 'close' not yet emitted: nothing to flush into
    }
  }, flushMs).unref();
  destination.on('close', () => clearInterval(flushes));
  return destination;
}

/**
 * A URL safe to log: the value of every `api_key` query parameter is replaced. Names are
 * decoded as the server decodes them, so an encoded name (`api%5Fkey`) is caught too.
 */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const query = url
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const rawName = eq < 0 ? pair : pair.slice(0, eq);
      return decodeName(rawName).toLowerCase() === 'api_key' ? `${rawName}=[REDACTED]` : pair;
    });
  return `${url.slice(0, q)}?${query.join('&')}`;
}

function decodeName(raw: string): string {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return raw;
  }
}
