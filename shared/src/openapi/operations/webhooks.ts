/**
 * Webhook subscriptions, their delivery log and redelivery
 * (docs/webhooks.md). One entry per operation, by its id (spec.ts).
 */
import { problems } from '../../domain/problem';
import { webhookSchema, webhookUpdateSchema } from '../../schemas/requests';
import { idPageQuerySchema } from '../../schemas/queries';
import {
  issuedWebhookSchema,
  queuedDeliverySchema,
  webhookDeliverySchema,
  webhookViewSchema,
} from '../../schemas/responses';
import { exampleProblems as ex, examples } from '../examples';
import { arrayOf, defineOperations, json, P, paged } from './spec';

export const WEBHOOK_OPERATIONS = defineOperations({
  createWebhook: {
    method: 'post',
    path: '/admin/v1/webhooks',
    tag: 'Admin',
    summary: 'Subscribe an endpoint to webhooks',
    description:
      'Deliveries are signed POSTs (Standard Webhooks; docs/webhooks.md). The secret is shown this once. ' +
      'A URL that is not http(s), or whose host resolves to a loopback, private, link-local ' +
      'or metadata address, is refused (unless `WEBHOOK_ALLOW_PRIVATE=1`).',
    access: 'admin',
    criticality: 'normal',
    role: 'admin',
    bound: 'locations',
    boundNote: 'only with `locationIds`, each within its own (403 otherwise)',
    traits: ['jsonBody'],
    body: {
      schema: webhookSchema,
      example: { url: 'https://hq.example.com/pos-events', events: ['order.placed', 'order.completed'] },
    },
    ok: {
      status: 201,
      description: 'The subscription and its secret',
      content: json(issuedWebhookSchema, { ...examples.webhook, secret: examples.webhookSecret }),
    },
    problems: [
      problems.validation("url's host resolves to 127.0.0.1, a loopback, private, link-local or metadata address"),
      ex.unknownLocation,
    ],
  },
  listWebhooks: {
    method: 'get',
    path: '/admin/v1/webhooks',
    tag: 'Admin',
    summary: 'List webhook subscriptions',
    description: `${paged} In creation order (by id). Never a secret.`,
    access: 'admin',
    criticality: 'sheddable',
    role: 'admin',
    bound: 'locations',
    boundNote: 'lists the subscriptions whose `locationIds` are all within its own',
    traits: ['paged'],
    query: idPageQuerySchema,
    ok: {
      status: 200,
      description: 'A page of subscriptions',
      content: json(arrayOf(webhookViewSchema), [examples.webhook]),
    },
  },
  getWebhook: {
    method: 'get',
    path: '/admin/v1/webhooks/{id}',
    tag: 'Admin',
    summary: 'Read a webhook subscription',
    description: 'A disabled endpoint shows when and why (`disabledAt`, `disabledReason`).',
    access: 'admin',
    criticality: 'normal',
    role: 'admin',
    bound: 'locations',
    boundNote: 'only subscriptions whose `locationIds` are all within its own (another answers 404, as a missing one)',
    params: [P.webhookId],
    ok: { status: 200, description: 'The subscription', content: json(webhookViewSchema, examples.webhook) },
    problems: [ex.webhookNotFound],
  },
  updateWebhook: {
    method: 'patch',
    path: '/admin/v1/webhooks/{id}',
    tag: 'Admin',
    summary: 'Change a webhook subscription',
    description: '`locationIds: []` covers every location again; `enabled: true` re-enables a disabled endpoint.',
    access: 'admin',
    criticality: 'normal',
    role: 'admin',
    bound: 'locations',
    boundNote:
      'only subscriptions whose `locationIds` are all within its own (another answers 404, as a ' +
      'missing one); new `locationIds` within its own, never `[]` (every location)',
    traits: ['jsonBody'],
    params: [P.webhookId],
    body: { schema: webhookUpdateSchema, example: { events: ['order.placed'] } },
    ok: {
      status: 200,
      description: 'The subscription as changed',
      content: json(webhookViewSchema, { ...examples.webhook, events: ['order.placed'] }),
    },
    problems: [ex.webhookNotFound, ex.unknownLocation],
  },
  deleteWebhook: {
    method: 'delete',
    path: '/admin/v1/webhooks/{id}',
    tag: 'Admin',
    summary: 'Remove a webhook subscription',
    description: 'Its pending deliveries are dropped; its delivery log expires with `WEBHOOK_LOG_RETENTION`.',
    access: 'admin',
    criticality: 'normal',
    role: 'admin',
    bound: 'locations',
    boundNote: 'only subscriptions whose `locationIds` are all within its own (another answers 404, as a missing one)',
    params: [P.webhookId],
    ok: { status: 204, description: 'Removed' },
    problems: [ex.webhookNotFound],
  },
  rotateWebhookSecret: {
    method: 'post',
    path: '/admin/v1/webhooks/{id}/rotate-secret',
    tag: 'Admin',
    summary: "Rotate a webhook subscription's secret",
    description:
      'A new secret, shown this once. For `KEY_ROTATION_GRACE` (10 min) every delivery carries two signatures ' +
      'in `webhook-signature`, the new secret’s and the old one’s; then only the new one.',
    access: 'admin',
    criticality: 'normal',
    role: 'admin',
    bound: 'locations',
    boundNote: 'only subscriptions whose `locationIds` are all within its own (another answers 404, as a missing one)',
    params: [P.webhookId],
    ok: {
      status: 200,
      description: 'The subscription with its new secret',
      content: json(issuedWebhookSchema, {
        ...examples.webhook,
        previousSecretExpiresAt: '2026-11-21T08:10:00.000Z',
        secret: examples.webhookSecret,
      }),
    },
    problems: [ex.webhookNotFound],
  },
  testWebhook: {
    method: 'post',
    path: '/admin/v1/webhooks/{id}/test',
    tag: 'Admin',
    summary: 'Send a `webhook.test` event',
    description: 'Queued like any delivery (retried, logged); `data` holds the subscription id.',
    access: 'admin',
    criticality: 'normal',
    role: 'admin',
    bound: 'locations',
    boundNote: 'only subscriptions whose `locationIds` are all within its own (another answers 404, as a missing one)',
    params: [P.webhookId],
    ok: {
      status: 202,
      description: 'The delivery, queued',
      content: json(queuedDeliverySchema, { webhookId: examples.webhookMessageId, type: 'webhook.test' }),
    },
    problems: [ex.webhookNotFound],
  },
  listWebhookDeliveries: {
    method: 'get',
    path: '/admin/v1/webhooks/{id}/deliveries',
    tag: 'Admin',
    summary: "A webhook subscription's delivery log",
    description: `${paged} Newest first: each attempt, kept for \`WEBHOOK_LOG_RETENTION\` (28 days).`,
    access: 'admin',
    criticality: 'sheddable',
    role: 'admin',
    bound: 'locations',
    boundNote: 'only subscriptions whose `locationIds` are all within its own (another answers 404, as a missing one)',
    params: [P.webhookId],
    traits: ['paged'],
    query: idPageQuerySchema,
    ok: {
      status: 200,
      description: 'A page of delivery attempts',
      content: json(arrayOf(webhookDeliverySchema), [examples.webhookDelivery]),
    },
    problems: [ex.webhookNotFound],
  },
  redeliverWebhook: {
    method: 'post',
    path: '/admin/v1/webhooks/{id}/deliveries/{deliveryId}/redeliver',
    tag: 'Admin',
    summary: 'Send a logged delivery again',
    description:
      'The same body and `webhook-id`, freshly signed, on a retry ' +
      'schedule of its own; sent even to a disabled endpoint.',
    access: 'admin',
    criticality: 'normal',
    role: 'admin',
    bound: 'locations',
    boundNote: 'only subscriptions whose `locationIds` are all within its own (another answers 404, as a missing one)',
    params: [P.webhookId, P.deliveryId],
    ok: {
      status: 202,
      description: 'The delivery, queued',
      content: json(queuedDeliverySchema, { webhookId: examples.webhookMessageId, type: 'order.placed' }),
    },
    problems: [ex.webhookNotFound, problems.notFound('Delivery does not exist')],
  },
});
