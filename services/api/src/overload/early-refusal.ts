/**
 * Refusals in front of the app (docs/overload.md#refusals-in-front-of-the-app). While the queue
 * admission refuses a partition, a queued write from a register or customer whose session this
 * node holds is answered in the HTTP listener itself, before Koa makes its context and runs any
 * middleware: the same 503 as the admission's (overload/admitted.ts: both route by routingKey,
 * render with queueRefusal and count with countRequest, under the same labels), at a fraction of
 * the cost, so that the refusals of an overload leave the node's CPU to the requests it
 * admits. Everything else (a key not held, a session the rules refuse, a
 * partition with room) goes on to the app, which decides as before: this path only refuses what
 * the app would refuse, on the same state. It is asked only within a second of a refusal (the
 * first ones of an overload are the app's), so that an admitted write pays nothing for it.
 *
 * Its log is one line per LOG_EVERY_MS while it refuses, with the count, not one per request.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { judgeSession } from '@pos/shared/auth/session-rules';
import { OPERATIONS, type OperationSpec } from '@pos/shared/openapi/operations';
import { routingKey } from '@pos/shared/queue/transition-queue';
import type { ApiDeps } from '../deps';
import { countRequest } from '../metrics/request-metrics';
import { routePath } from '../routes/mount';
import { queueRefusal } from './refusal';

const LOG_EVERY_MS = 5_000;
/** How long after a refusal the admission is asked here first. */
const REFUSING_MS = 1_000;

interface QueuedRoute {
  method: string;
  pattern: RegExp;
  /** The route's label in the request metrics: the router's pattern, as @koa/router reports it. */
  route: string;
  spec: OperationSpec;
}

/** The queued writes of registers and customers that are routed by their session's location. */
function queuedRoutes(basePath: string): QueuedRoute[] {
  return OPERATIONS.filter(
    (spec) =>
      spec.traits?.includes('queued') &&
      (spec.access === 'register' || spec.access === 'customer') &&
      spec.partitionBy !== 'session',
  ).map((spec) => {
    const route = routePath(spec.path, basePath);
    const pattern = new RegExp(`^${route.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/:[A-Za-z]+/g, '[^/]+')}$`);
    return { method: spec.method.toUpperCase(), pattern, route, spec };
  });
}

type Deps = Pick<ApiDeps, 'admission' | 'queues' | 'sessionLookup' | 'presence' | 'metrics' | 'config' | 'log'>;

/** The public listener's handler: refusals answered here, every other request handed to `app`. */
export function withEarlyRefusals(deps: Deps, app: RequestListener): RequestListener {
  const routes = queuedRoutes(deps.config.http.basePath);
  const methods = new Set(routes.map((r) => r.method));
  let refused = 0;
  let loggedAt = 0;

  const refusalOf = (req: IncomingMessage): { route: QueuedRoute; path: string; partition: number } | undefined => {
    // with no refusal lately (the app's refuses first), an admitted write is not looked at twice
    if (!methods.has(req.method!) || !deps.admission.refusedWithin(REFUSING_MS)) return undefined;
    const key = req.headers['api_key'];
    if (typeof key !== 'string') return undefined;
    const path = req.url!.split('?', 1)[0]!;
    const route = routes.find((r) => r.method === req.method && r.pattern.test(path));
    if (!route) return undefined;
    const held = deps.sessionLookup.fromCache(key);
    const verdict =
      held &&
      judgeSession(held.session, held.keyHash, route.spec.access === 'register' ? 'SERVICE' : 'CUSTOMER', new Date());
    if (!verdict?.ok) return undefined;
    const partition = deps.queues.partitionOfKey(routingKey('location', { locationId: verdict.session.locationId })!);
    if (deps.admission.admits(partition, route.spec.criticality)) return undefined;
    if (route.spec.access === 'register') deps.presence.sighted(verdict.session);
    return { route, path, partition };
  };

  return (req: IncomingMessage, res: ServerResponse) => {
    const started = process.hrtime.bigint();
    const refuse = refusalOf(req);
    if (!refuse) return app(req, res);
    const refusal = queueRefusal(refuse.path, deps.admission.retryAfterSeconds(refuse.partition));
    res.writeHead(refusal.status, { ...refusal.headers, 'X-Request-Id': randomUUID() });
    res.end(refusal.body);
    countRequest(
      deps.metrics,
      { method: req.method!, route: refuse.route.route, status: refusal.status },
      started,
      'queue',
    );
    refused += 1;
    const now = Date.now();
    if (now - loggedAt >= LOG_EVERY_MS) {
      deps.log.warn(
        { refused },
        'queued writes refused in front of the app since the last such line: the queue admission is full',
      );
      [refused, loggedAt] = [0, now];
    }
  };
}
