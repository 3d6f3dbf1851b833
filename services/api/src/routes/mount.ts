import type Router from '@koa/router';
import type { Middleware } from 'koa';
import type { OperationInput } from '@pos/shared/openapi/operations';
import type { AppState } from '../context';
import type { RequestPipeline } from './pipeline';
import { createRouter } from './router';

/** What answers an operation once its middleware (pipeline.ts) has let the request through. */
export type Handler = Middleware<AppState>;

/** The operations of a part of the table that routes serve: all but Bull Board's (a mounted app). */
type Routed<T extends Record<string, OperationInput>> = {
  [K in keyof T as T[K]['access'] extends 'board' ? never : K]: T[K];
};

/**
 * A handler for every routed operation of a part of the table: one missing, or one too many, fails the type check.
 */
export type Handlers<T extends Record<string, OperationInput>> = { [K in keyof Routed<T>]: Handler };

/** `{base}/orders/{number}/statusupdate` as the router's `/api/v1/orders/:number/statusupdate`. */
export function routePath(path: string, basePath: string): string {
  return path.replace('{base}', basePath).replace(/\{([A-Za-z]+)\}/g, ':$1');
}

/**
 * A router of one part of the operation table: each operation at its method and path, behind the
 * middleware its entry asks for (pipeline.ts), answered by its handler. The table is the one
 * place an operation is declared; a route exists only as an entry of it.
 */
export function routesOf<T extends Record<string, OperationInput>>(
  pipeline: RequestPipeline,
  basePath: string,
  table: T,
  handlers: Handlers<T>,
): Router<AppState> {
  const router = createRouter();
  const byId = handlers as Record<string, Handler>;
  for (const [id, spec] of Object.entries(table)) {
    if (spec.access === 'board') continue;
    const handler = byId[id];
    if (!handler) throw new Error(`operation ${id} has no handler`);
    const path = routePath(spec.path, basePath);
    router[spec.method](id, path, ...pipeline.of({ id, ...spec }), handler);
  }
  return router;
}
