import { ProblemError, problems } from '@pos/shared/domain/problem';
import { toDeliveryView, toWebhookView } from '@pos/shared/domain/views';
import type { WEBHOOK_OPERATIONS } from '@pos/shared/openapi/operations';
import { validators } from '@pos/shared/schemas/requests';
import { queryValidators } from '@pos/shared/schemas/queries';
import type { IssuedWebhook, QueuedDelivery } from '@pos/shared/schemas/responses';
import type { WebhookDoc } from '@pos/shared/store/documents';
import { isId } from '@pos/shared/store/query-values';
import { auditChange, auditDone, changed, webhookFields } from '../audit/change';
import type { AppContext } from '../context';
import type { ApiDeps } from '../deps';
import { beginWork } from '../middleware/idempotency';
import { bodyOf } from '../middleware/json-body';
import { RequestLimiter } from '../middleware/rate-limit';
import { SUBSCRIPTION_NOT_FOUND, type Webhooks } from '../services/webhooks';
import { checkGrant, checkResource, listScope } from './admin-access';
import type { Handlers } from './mount';
import { queryOf, sendPage } from './pages';

const issued = ({ doc, secret }: { doc: WebhookDoc; secret: string }): IssuedWebhook => ({
  ...toWebhookView(doc),
  secret,
});

/** The subscription the path names, within the caller's scope: a 404 otherwise. */
async function scopedSubscription(webhooks: Pick<Webhooks, 'find'>, ctx: AppContext): Promise<WebhookDoc> {
  const found = isId(ctx.params.id) ? await webhooks.find(ctx.params.id) : null;
  if (!found) throw new ProblemError(problems.notFound(SUBSCRIPTION_NOT_FOUND));
  checkResource(ctx, found.locationIds, SUBSCRIPTION_NOT_FOUND);
  return found;
}

/** WEBHOOK_TEST_LIMIT: test events and redeliveries per subscription. */
function sendLimiter(deps: Pick<ApiDeps, 'config' | 'redis' | 'log'>): RequestLimiter {
  return new RequestLimiter({
    limit: deps.config.webhooks.testLimit,
    redis: deps.redis,
    keyPrefix: `${deps.config.redis.prefix}:webhooks:sent`,
    policy: 'per-subscription',
    per: 'of test events and redeliveries to this subscription',
    log: deps.log,
  });
}

/** Subscriptions within the caller's scope, listed and read. */
function subscriptionReads(
  deps: Pick<ApiDeps, 'services'>,
): Pick<Handlers<typeof WEBHOOK_OPERATIONS>, 'listWebhooks' | 'getWebhook'> {
  const { webhooks } = deps.services;
  return {
    listWebhooks: async (ctx: AppContext) => {
      const page = queryOf(ctx, queryValidators.idPage);
      sendPage(ctx, (await webhooks.list(page, listScope(ctx))).map(toWebhookView), page.limit, (last) => last.id);
    },

    getWebhook: async (ctx: AppContext) => {
      ctx.body = toWebhookView(await scopedSubscription(webhooks, ctx));
    },
  };
}

/** Subscriptions created, changed, removed, their secret rotated. */
function subscriptionWrites(
  deps: Pick<ApiDeps, 'services'>,
): Pick<
  Handlers<typeof WEBHOOK_OPERATIONS>,
  'createWebhook' | 'updateWebhook' | 'deleteWebhook' | 'rotateWebhookSecret'
> {
  const { webhooks, locations } = deps.services;
  const subscriptionOf = (ctx: AppContext) => scopedSubscription(webhooks, ctx);

  return {
    createWebhook: async (ctx: AppContext) => {
      const input = bodyOf(ctx, validators.webhook);
      await checkGrant(ctx, { locations: input.locationIds ?? 'all' }, locations);
      await webhooks.checkUrl(input.url);
      await beginWork(ctx);
      const created = await webhooks.create(input, ctx.state.log);
      auditChange(ctx, { id: created.doc._id, after: webhookFields(created.doc) });
      ctx.status = 201;
      ctx.body = issued(created);
    },

    updateWebhook: async (ctx: AppContext) => {
      const changes = bodyOf(ctx, validators.webhookUpdate);
      await checkGrant(
        ctx,
        {
          locations:
            changes.locationIds === undefined
              ? undefined
              : changes.locationIds.length === 0
                ? 'all'
                : changes.locationIds,
        },
        locations,
      );
      if (changes.url !== undefined) await webhooks.checkUrl(changes.url);
      await beginWork(ctx);
      const before = await subscriptionOf(ctx);
      const updated = await webhooks.update(before._id, changes, ctx.state.log);
      auditChange(ctx, changed(webhookFields(before), webhookFields(updated)));
      ctx.body = toWebhookView(updated);
    },

    deleteWebhook: async (ctx: AppContext) => {
      await beginWork(ctx);
      const subscription = await subscriptionOf(ctx);
      await webhooks.remove(subscription._id, ctx.state.log);
      auditChange(ctx, { before: webhookFields(subscription) });
      ctx.status = 204;
    },

    rotateWebhookSecret: async (ctx: AppContext) => {
      await beginWork(ctx);
      const rotated = await webhooks.rotateSecret(await subscriptionOf(ctx), ctx.state.log);
      auditDone(ctx, rotated.doc._id, { secretRotated: true });
      ctx.body = issued(rotated);
    },
  };
}

/** What a subscription was sent (test events, the delivery log, redeliveries), within its WEBHOOK_TEST_LIMIT. */
function sending(
  deps: Pick<ApiDeps, 'services' | 'config' | 'redis' | 'log'>,
): Pick<Handlers<typeof WEBHOOK_OPERATIONS>, 'testWebhook' | 'listWebhookDeliveries' | 'redeliverWebhook'> {
  const { webhooks } = deps.services;
  const sent = sendLimiter(deps);
  /** A test event or a redelivery: counted against the subscription's WEBHOOK_TEST_LIMIT, then queued. */
  const send = async (ctx: AppContext, subscription: WebhookDoc, queue: () => Promise<QueuedDelivery>) => {
    await sent.consume(ctx, subscription._id);
    const queued = await queue();
    auditDone(ctx, subscription._id, { sent: queued.type, webhookId: queued.webhookId });
    ctx.body = queued;
    ctx.status = 202;
  };
  const subscriptionOf = (ctx: AppContext) => scopedSubscription(webhooks, ctx);

  return {
    testWebhook: async (ctx: AppContext) => {
      await beginWork(ctx);
      const subscription = await subscriptionOf(ctx);
      await send(ctx, subscription, () => webhooks.test(subscription));
    },

    listWebhookDeliveries: async (ctx: AppContext) => {
      const subscription = await subscriptionOf(ctx);
      const page = queryOf(ctx, queryValidators.idPage);
      sendPage(
        ctx,
        (await webhooks.deliveryLog(subscription._id, page, listScope(ctx))).map(toDeliveryView),
        page.limit,
        (last) => last.id,
      );
    },

    redeliverWebhook: async (ctx: AppContext) => {
      await beginWork(ctx);
      const subscription = await subscriptionOf(ctx);
      const deliveryId = String(ctx.params.deliveryId);
      if (!isId(deliveryId)) throw new ProblemError(problems.notFound('Delivery does not exist'));
      await send(ctx, subscription, () => webhooks.redeliver(subscription, deliveryId, listScope(ctx), ctx.state.log));
    },
  };
}

/**
 * Webhook subscriptions (docs/webhooks.md). An admin bound to locations manages only
 * subscriptions whose locations all lie within its own (admin-access.ts). Test events and
 * redeliveries are limited per subscription (WEBHOOK_TEST_LIMIT).
 */
export function webhookHandlers(
  deps: Pick<ApiDeps, 'services' | 'config' | 'redis' | 'log'>,
): Handlers<typeof WEBHOOK_OPERATIONS> {
  return { ...subscriptionReads(deps), ...subscriptionWrites(deps), ...sending(deps) };
}
