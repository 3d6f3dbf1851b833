import { coversAll } from '@pos/shared/auth/scope';
import { ProblemError, problems } from '@pos/shared/domain/problem';
import { versionOfEtag } from '@pos/shared/domain/menu';
import type { ADMIN_MENU_OPERATIONS, MENU_OPERATIONS } from '@pos/shared/openapi/operations';
import { menuValidators } from '@pos/shared/schemas/menu';
import { auditDone } from '../audit/change';
import { type AppContext, sessionOf } from '../context';
import type { ApiDeps } from '../deps';
import { operatorOfRequest } from '../middleware/admin-auth';
import { beginWork } from '../middleware/idempotency';
import { bodyOf } from '../middleware/json-body';
import type { Accepted, MenuAnswer, MenuHolder, Menus } from '../services/menus';
import { locationOf } from './admin-access';
import type { Handlers } from './mount';

/**
 * What its holders may keep of a menu answer: revalidated with its ETag
 * (never by a shared cache: it sits behind a key).
 */
const MENU_CACHE = 'private, no-cache';

/**
 * Whether `If-None-Match` names the ETag (RFC 9110 13.1.2, weak comparison; `*`: any). Not Koa's
 * `ctx.fresh`: it answers "stale" to every request with `Cache-Control: no-cache`, which fetch()
 * adds to any request carrying `If-None-Match`, so no fetch() client would ever get its 304.
 */
function noneMatch(header: string, etag: string): boolean {
  if (header.trim() === '*') return true;
  const weak = (tag: string) => tag.trim().replace(/^W\//, '');
  return header.split(',').some((tag) => weak(tag) === weak(etag));
}

/** A menu answered with its ETag; a 304 without a body when `If-None-Match` names it. */
async function sendMenu(ctx: AppContext, answer: MenuAnswer): Promise<void> {
  ctx.set('ETag', answer.etag);
  ctx.set('Cache-Control', MENU_CACHE);
  if (noneMatch(ctx.get('If-None-Match'), answer.etag)) {
    ctx.status = 304;
    return;
  }
  ctx.body = await answer.view();
}

const menuRecord = (accepted: Accepted) => ({ menuId: accepted.id, ...accepted.counts });

/**
 * The version an `If-Match` names (undefined: none given); a tag that names no version of this
 * location's menu matches nothing (412), `*` matches whichever it has (none: 412).
 */
function expectedVersion(ctx: AppContext, location: MenuHolder): number | undefined {
  const header = ctx.get('If-Match');
  if (header === '') return undefined;
  const version = header.trim() === '*' ? location.menu?.version : versionOfEtag(header);
  if (version === undefined)
    throw new ProblemError(problems.preconditionFailed('If-Match names no version of this menu: read it again'));
  return version;
}

/** A snooze or its lift, answered with the availability as set. */
async function setAvailability(ctx: AppContext, menus: Menus, location: MenuHolder): Promise<void> {
  const input = bodyOf(ctx, menuValidators.availability);
  await beginWork(ctx);
  ctx.body = await menus.setAvailability(location, String(ctx.params.productId), input, ctx.state.log);
}

/** The register's and the customer app's side of the menu (docs/menu.md): each at the caller's own location. */
export function menuHandlers(deps: Pick<ApiDeps, 'services'>): Handlers<typeof MENU_OPERATIONS> {
  const { menus } = deps.services;
  return {
    exportMenu: async (ctx: AppContext) => {
      const menu = menus.check(ctx.request.body ?? {});
      await beginWork(ctx);
      const { locationId } = sessionOf(ctx);
      const accepted = await menus.publish([locationId], menu, 'register', ctx.state.log);
      await sendMenu(ctx, await menus.accepted(locationId, accepted, 'register'));
    },

    getMenu: async (ctx: AppContext) => {
      await sendMenu(ctx, menus.read(await menus.holder(sessionOf(ctx).locationId)));
    },

    setMenuAvailability: async (ctx: AppContext) => {
      await setAvailability(ctx, menus, await menus.holder(sessionOf(ctx).locationId));
    },

    getCustomerMenu: async (ctx: AppContext) => {
      await sendMenu(ctx, menus.read(await menus.holder(sessionOf(ctx).locationId)));
    },
  };
}

/**
 * The operators' side: a location's menu read and replaced (conditionally, with `If-Match`), its
 * products snoozed, and one menu published to many locations. A menu an operator places asks the
 * location's registers to fetch it (a FETCH_REMOTE_MENU command). The audit records the menu's
 * hash and counts, never its body.
 */
export function adminMenuHandlers(deps: Pick<ApiDeps, 'services'>): Handlers<typeof ADMIN_MENU_OPERATIONS> {
  const { menus, locations } = deps.services;
  return {
    getLocationMenu: async (ctx: AppContext) => {
      await sendMenu(ctx, menus.read(await locationOf(ctx, locations)));
    },

    putLocationMenu: async (ctx: AppContext) => {
      const location = await locationOf(ctx, locations);
      const menu = menus.check(ctx.request.body ?? {});
      const expected = expectedVersion(ctx, location);
      await beginWork(ctx);
      const accepted = await menus.publish([location._id], menu, 'operator', ctx.state.log, expected);
      await menus.askToFetch([location._id], ctx.state.log, ctx.state.idempotencyId);
      auditDone(ctx, location._id, { ...menuRecord(accepted), version: accepted.versions.get(location._id)! });
      await sendMenu(ctx, await menus.accepted(location._id, accepted, 'operator'));
    },

    setLocationMenuAvailability: async (ctx: AppContext) => {
      const location = await locationOf(ctx, locations);
      await setAvailability(ctx, menus, location);
      auditDone(ctx, location._id, {
        productId: String(ctx.params.productId),
        available: (ctx.body as { available: boolean }).available,
      });
    },

    publishMenu: async (ctx: AppContext) => {
      const input = bodyOf(ctx, menuValidators.publish);
      const menu = menus.check(input.menu, '/menu');
      if (!coversAll(operatorOfRequest(ctx), input.locationIds))
        throw new ProblemError(problems.forbidden('Every location of locationIds must be within your own'));
      if (input.locationIds.length === 1) ctx.state.auditLocationId = input.locationIds[0];
      await beginWork(ctx);
      const accepted = await menus.publish(input.locationIds, menu, 'operator', ctx.state.log);
      await menus.askToFetch(input.locationIds, ctx.state.log, ctx.state.idempotencyId);
      auditDone(ctx, accepted.id, { ...menuRecord(accepted), locationIds: [...input.locationIds] });
      ctx.body = {
        results: input.locationIds.map((locationId) => ({ locationId, version: accepted.versions.get(locationId)! })),
      };
    },
  };
}
