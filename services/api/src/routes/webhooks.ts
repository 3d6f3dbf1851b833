import { randomBytes, randomUUID } from 'node:crypto';
import { ProblemError, problems } from '@pos/shared/domain/problem';
import type { WEBHOOK_OPERATIONS } from '@pos/shared/openapi/operations';
import type { DeliveryJobData } from '@pos/shared/queue/webhook-queue';
import { queryValidators, validators } from '@pos/shared/schemas/requests';
import type { IssuedWebhook, QueuedDelivery, WebhookDelivery } from '@pos/shared/schemas/responses';
import type { WebhookDeliveryDoc, WebhookDoc } from '@pos/shared/store/documents';
import { newId } from '@pos/shared/store/ids';
import { isId } from '@pos/shared/store/query-values';
import { toWebhookView } from '@pos/shared/store/webhooks';
import { deliveryBody, subscriptionsChanged } from '@pos/shared/webhooks/emitter';
import { TEST_EVENT_TYPE } from '@pos/shared/webhooks/event-types';
import { newWebhookSecret } from '@pos/shared/webhooks/secrets';
import { checkWebhookUrl, UrlRefused } from '@pos/shared/webhooks/url-guard';
import type { AppContext } from '../context';
import type { ApiDeps } from '../deps';
import { beginWork } from '../middleware/idempotency';
import { bodyOf } from '../middleware/json-body';
import { RequestLimiter } from '../middleware/rate-limit';
import { auditChange, changed as changedFields, webhookFields } from '../audit/change';
import { checkGrant, checkResource, listScope } from './admin-access';
import type { Handlers } from './mount';
import { queryOf, sendPage } from './pages';

function toDeliveryView(doc: WebhookDeliveryDoc): WebhookDelivery {
  const view: WebhookDelivery = { id: doc._id, webhookId: doc.webhookId, type: doc.type, attempt: doc.attempt, outcome: doc.outcome, durationMs: doc.durationMs, at: doc.at.toISOString() };
  if (doc.statusCode !== undefined) view.statusCode = doc.statusCode;
  if (doc.error !== undefined) view.error = doc.error;
  if (doc.nextRetryAt) view.nextRetryAt = doc.nextRetryAt.toISOString();
  if (doc.redelivery) view.redelivery = true;
  return view;
}

/**
 * Webhook subscriptions (docs/webhooks.md): create, list, read, change, remove, rotate the
 * secret, send a test event, read the delivery log, redeliver. Every change of the set of
 * subscriptions tells the fan-out's caches (subscriptionsChanged). An admin bound to locations
 * manages only subscriptions whose locations all lie within its own (routes/admin-access.ts).
 * Test events and redeliveries are limited per subscription (WEBHOOK_TEST_LIMIT).
 */
export function webhookHandlers(deps: ApiDeps): Handlers<typeof WEBHOOK_OPERATIONS> {
  const { webhooks: settings } = deps.config;
  const changed = () => subscriptionsChanged(deps.redis, deps.config.redis.prefix);
  const sent = new RequestLimiter({
    limit: settings.testLimit,
    redis: deps.redis,
    keyPrefix: `${deps.config.redis.prefix}:webhooks:sent`,
    policy: 'per-subscription',
    per: 'of test events and redeliveries to this subscription',
    log: deps.log,
  });

  const NOT_FOUND = 'Webhook subscription does not exist';
  /** The subscription the path names, within the caller's scope: a 404 otherwise. */
  const subscriptionOf = async (ctx: AppContext): Promise<WebhookDoc> => {
    const found = isId(ctx.params.id) ? await deps.webhooks.find(ctx.params.id) : null;
    if (!found) throw new ProblemError(problems.notFound(NOT_FOUND));
    checkResource(ctx, found.locationIds, NOT_FOUND);
    return found;
  };

  /** The SSRF guard at creation: a refused URL is a 400 saying why. */
  const checkUrl = async (url: string) => {
    try {
      await checkWebhookUrl(url, settings.allowPrivate);
    } catch (err) {
      if (err instanceof UrlRefused) throw new ProblemError(problems.validation(err.message));
      throw err;
    }
  };

  /** A test event or a redelivery, counted against the subscription's WEBHOOK_TEST_LIMIT. */
  const enqueue = async (ctx: AppContext, delivery: DeliveryJobData, jobId: string): Promise<QueuedDelivery> => {
    await sent.consume(ctx, delivery.subscriptionId);
    await deps.deliveries.add([delivery], () => jobId);
    return { webhookId: delivery.webhookId, type: delivery.type };
  };

  return {
    createWebhook: async (ctx: AppContext) => {
      const input = bodyOf(ctx, validators.webhook);
      checkGrant(ctx, { locations: input.locationIds ?? 'all' });
      await checkUrl(input.url);
      await beginWork(ctx);
      const now = new Date();
      const secret = newWebhookSecret();
      const doc: WebhookDoc = { _id: newId(), url: input.url, events: input.events, secret: deps.webhookSecrets.seal(secret), createdAt: now, updatedAt: now };
      if (input.locationIds) doc.locationIds = input.locationIds;
      if (input.description !== undefined) doc.description = input.description;
      await deps.webhooks.create(doc);
      auditChange(ctx, { id: doc._id, after: webhookFields(doc) });
      await changed();
      ctx.state.log.info({ subscriptionId: doc._id, events: doc.events }, 'webhook subscription created');
      const body: IssuedWebhook = { ...toWebhookView(doc), secret };
      ctx.status = 201;
      ctx.body = body;
    },

    listWebhooks: async (ctx: AppContext) => {
      const page = queryOf(ctx, queryValidators.idPage);
      sendPage(ctx, (await deps.webhooks.list(page, listScope(ctx))).map(toWebhookView), page.limit, (last) => last.id);
    },

    getWebhook: async (ctx: AppContext) => {
      ctx.body = toWebhookView(await subscriptionOf(ctx));
    },

    updateWebhook: async (ctx: AppContext) => {
      const changes = bodyOf(ctx, validators.webhookUpdate);
      checkGrant(ctx, { locations: changes.locationIds === undefined ? undefined : changes.locationIds.length === 0 ? 'all' : changes.locationIds });
      if (changes.url !== undefined) await checkUrl(changes.url);
      await beginWork(ctx);
      const before = await subscriptionOf(ctx);
      const updated = await deps.webhooks.update(before._id, changes, new Date());
      if (!updated) throw new ProblemError(problems.notFound(NOT_FOUND));
      auditChange(ctx, changedFields(webhookFields(before), webhookFields(updated)));
      await changed();
      ctx.state.log.info({ subscriptionId: updated._id, fields: Object.keys(changes) }, 'webhook subscription updated');
      ctx.body = toWebhookView(updated);
    },

    deleteWebhook: async (ctx: AppContext) => {
      await beginWork(ctx);
      const subscription = await subscriptionOf(ctx);
      if (!(await deps.webhooks.remove(subscription._id))) throw new ProblemError(problems.notFound(NOT_FOUND));
      auditChange(ctx, { before: webhookFields(subscription) });
      await changed();
      ctx.state.log.info({ subscriptionId: subscription._id }, 'webhook subscription removed');
      ctx.status = 204;
    },

    // The old secret signs beside the new one for KEY_ROTATION_GRACE: receivers switch without a gap.
    rotateWebhookSecret: async (ctx: AppContext) => {
      await beginWork(ctx);
      const current = await subscriptionOf(ctx);
      const now = new Date();
      const secret = newWebhookSecret();
      const rotated = await deps.webhooks.rotate(current._id, deps.webhookSecrets.seal(secret), current.secret, new Date(now.getTime() + deps.config.auth.keyRotationGraceMs), now);
      // Another rotation won the race: this one's secret was never stored.
      if (!rotated) throw new ProblemError(problems.conflict('The secret was rotated concurrently; rotate again'));
      ctx.state.log.info({ subscriptionId: rotated._id }, 'webhook secret rotated');
      const body: IssuedWebhook = { ...toWebhookView(rotated), secret };
      ctx.body = body;
    },

    testWebhook: async (ctx: AppContext) => {
      await beginWork(ctx);
      const subscription = await subscriptionOf(ctx);
      const webhookId = `msg_${randomBytes(18).toString('base64url')}`;
      const body = deliveryBody(TEST_EVENT_TYPE, new Date(), undefined, { subscriptionId: subscription._id });
      ctx.body = await enqueue(ctx, { subscriptionId: subscription._id, webhookId, type: TEST_EVENT_TYPE, body }, webhookId);
      ctx.status = 202;
    },

    listWebhookDeliveries: async (ctx: AppContext) => {
      const subscription = await subscriptionOf(ctx);
      const page = queryOf(ctx, queryValidators.idPage);
      sendPage(ctx, (await deps.webhookDeliveries.list(subscription._id, page)).map(toDeliveryView), page.limit, (last) => last.id);
    },

    // The same body and webhook-id again (receivers that saw it drop it), on a schedule of its own.
    redeliverWebhook: async (ctx: AppContext) => {
      await beginWork(ctx);
      const subscription = await subscriptionOf(ctx);
      const entry = isId(ctx.params.deliveryId) ? await deps.webhookDeliveries.find(subscription._id, ctx.params.deliveryId) : null;
      if (!entry) throw new ProblemError(problems.notFound('Delivery does not exist'));
      ctx.state.log.info({ subscriptionId: subscription._id, webhookId: entry.webhookId }, 'webhook redelivery queued');
      ctx.body = await enqueue(
        ctx,
        { subscriptionId: subscription._id, webhookId: entry.webhookId, type: entry.type, body: entry.body, redelivery: true },
        `${entry.webhookId}-redelivery-${randomUUID()}`,
      );
      ctx.status = 202;
    },
  };
}
