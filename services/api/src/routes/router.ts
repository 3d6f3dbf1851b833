import Router from '@koa/router';
import type { AppState } from '../context';

/**
 * Every router of the service. Paths match case-sensitively: `/Admin/v1` is not `/admin/v1`,
 * so that what a gateway blocks by path is exactly what the routes serve (app.ts refuses a
 * router made otherwise).
 */
export function createRouter(prefix?: string): Router<AppState> {
  return new Router<AppState>({ prefix, sensitive: true });
}
