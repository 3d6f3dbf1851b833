/**
 * Examples for the document, made by the code's own serialisers from sample documents, so that
 * an example is what the service would send (the linter checks each against its schema too).
 */
import { SESSION_NOT_VALID_BODY } from '../auth/session-rules';
import { type MenuDocument, menuView, snoozedAt } from '../domain/menu';
import { Problem, problems } from '../domain/problem';
import { toCommandRecord, toOperatorOrderRecord, toOrderRecord } from '../domain/records';
import type { PresenceView } from '../schemas/responses';
import type { AuditDoc, CommandDoc, LocationDoc, OrderDoc } from '../store/documents';
import { storeProblem } from '../store/store-errors';
import { auditHash } from '../store/audit';
import { toLocationView, toSessionView, toWebhookView, toAuditRecord } from '../domain/views';

export const EXAMPLE_IDS = {
  location: '019a8f2c-5b1e-7c3d-9a40-2e6f1b7d8c90',
  session: '019a8f2d-0c4a-7e21-8b5f-4d3c2a1b0e9f',
  operator: '019a8f2b-1d2e-7f30-9b41-5c6d7e8f9a0b',
  audit: '019a8f31-2a3b-7c4d-8e5f-6a7b8c9d0e1f',
  request: 'b3c1e6a2-7d4f-4e1a-9c2b-8f5e3d1a0c47',
  error: '6f1c2d3e-4b5a-4c7d-8e9f-0a1b2c3d4e5f',
  webhook: '019a8f2e-7d10-7a55-9c31-5e4f3a2b1c0d',
  delivery: '019a8f31-2a6b-7f08-a1d2-3c4b5a6f7e8d',
} as const;

const at = (time: string) => new Date(`2026-11-21T${time}Z`);

const orderDoc: OrderDoc = {
  _id: `${EXAMPLE_IDS.location}:7`,
  locationId: EXAMPLE_IDS.location,
  number: 7,
  state: 'PLACED',
  version: 2,
  failureCount: 0,
  appliedJobs: [],
  rows: [
    { rowNumber: 1, productId: 'sku-1', name: 'Burger', quantity: 2, unitPrice: 1290 },
    { rowNumber: 2, productId: 'sku-7', name: 'Lemonade', quantity: 1, unitPrice: 390, notes: 'no ice' },
  ],
  guestCount: 1,
  tableNumber: 4,
  userNumber: 1001,
  orderTime: at('07:11:04.092'),
  createdAt: at('07:09:30.000'),
  updatedAt: at('07:11:04.092'),
};

const commandDoc: CommandDoc = {
  _id: `${EXAMPLE_IDS.location}:3`,
  locationId: EXAMPLE_IDS.location,
  number: 3,
  kind: 'REQUEST_BILL',
  tableNumber: 4,
  createdAt: at('07:20:00.000'),
  expiresAt: at('07:30:00.000'),
};

const locationDoc: LocationDoc = {
  _id: EXAMPLE_IDS.location,
  name: 'Main Street',
  failureThreshold: 3,
  orderSeq: 7,
  commandSeq: 3,
  createdAt: at('06:00:00.000'),
  online: true,
  onlineSince: at('06:05:00.000'),
};

/** An audit record as the service writes it: an operator's creation, chained to the one before. */
function exampleAuditRecord() {
  const doc: AuditDoc = {
    _id: EXAMPLE_IDS.audit,
    at: new Date('2026-11-21T07:12:30.411Z'),
    operatorName: 'HQ ops',
    role: 'admin',
    method: 'POST',
    route: '/admin/v1/operators',
    targets: {},
    status: 201,
    requestId: EXAMPLE_IDS.request,
    change: {
      id: EXAMPLE_IDS.operator,
      after: { name: 'Main Street manager', role: 'manager', locationIds: [EXAMPLE_IDS.location] },
    },
    seq: 42,
    prevHash: '5d41402abc4b2a76b9719d911017c592ae5d8c3e6c1a4b6f0e2d7c9a8b1f3e40',
    purgeAt: new Date('2027-12-26T07:12:30.411Z'),
  };
  return toAuditRecord({ ...doc, hash: auditHash(doc) });
}

/** A small menu: two items, one group of options. */
const menuDocument: MenuDocument = {
  currency: 'EUR',
  items: [
    { productId: 'sku-burger', name: 'Burger', price: 1290, category: 'Mains', modifierGroupIds: ['grp-extras'] },
    { productId: 'sku-fries', name: 'Fries', price: 450, category: 'Sides' },
  ],
  modifierGroups: [
    {
      id: 'grp-extras',
      name: 'Extras',
      min: 0,
      max: 2,
      options: [{ productId: 'opt-cheese', name: 'Cheese', price: 100 }],
    },
  ],
};

export const examples = {
  menuDocument,
  menu: menuView(
    menuDocument,
    { version: 3, source: 'register', publishedAt: at('06:30:00.000') },
    snoozedAt([{ productId: 'sku-fries', until: at('18:00:00.000'), reason: 'sold out' }], at('07:00:00.000')),
  ),
  placedOrder: toOrderRecord(orderDoc),
  operatorOrder: toOperatorOrderRecord({ ...orderDoc, failureCount: 1, failedTime: at('07:12:00.000') }),
  completedOrder: toOrderRecord({ ...orderDoc, state: 'COMPLETED', completeTime: at('07:14:40.310') }),
  selectingOrder: toOrderRecord({ ...orderDoc, state: 'SELECTING', orderTime: undefined }),
  command: toCommandRecord(commandDoc),
  location: toLocationView(locationDoc, at('07:00:00.000')),
  pausedLocation: toLocationView(
    { ...locationDoc, pausedAt: at('07:00:00.000'), pausedUntil: at('09:00:00.000'), pauseReason: 'kitchen closed' },
    at('07:00:00.000'),
  ),
  presence: {
    online: true,
    since: at('06:05:00.000').toISOString(),
    registers: [
      {
        sessionId: EXAMPLE_IDS.session,
        deviceId: 'register-1',
        lastSeenAt: at('07:00:00.000').toISOString(),
        streams: 1,
      },
    ],
  } satisfies PresenceView,
  session: toSessionView({
    _id: EXAMPLE_IDS.session,
    type: 'SERVICE',
    locationId: EXAMPLE_IDS.location,
    keyHash: '',
    deviceId: 'register-1',
    createdAt: at('06:01:00.000'),
  }),
  operator: {
    id: EXAMPLE_IDS.operator,
    name: 'Main Street manager',
    role: 'manager',
    locationIds: [EXAMPLE_IDS.location],
    createdAt: '2026-11-21T05:50:00.000Z',
  },
  auditRecord: exampleAuditRecord(),
  apiKey: 'pos_D9YuS2GvbS-wEih4_-Yxpw0FdyZgyw8HLNBLYr8q2QaINhsuWx68d0bWEGiy6lZv',
  webhook: toWebhookView({
    _id: EXAMPLE_IDS.webhook,
    url: 'https://hq.example.com/pos-events',
    events: ['order.placed', 'order.completed'],
    secret: '',
    createdAt: at('06:02:00.000'),
    updatedAt: at('06:02:00.000'),
  }),
  webhookSecret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw/WcwdTzYwAs=',
  webhookMessageId: 'msg_Xo3sPq0Lz9vN2bY7cQ1wE4rT',
  event: {
    id: 'evt_Hc2l1Vx8mQpR0sT4uW6yZa3b',
    type: 'order.placed',
    timestamp: '2026-11-21T07:11:04.092Z',
    data: { locationId: EXAMPLE_IDS.location, order: { ...toOperatorOrderRecord(orderDoc), version: 1 } },
  },
  webhookDelivery: {
    id: EXAMPLE_IDS.delivery,
    webhookId: 'msg_Xo3sPq0Lz9vN2bY7cQ1wE4rT',
    type: 'order.placed',
    attempt: 2,
    outcome: 'retrying' as const,
    statusCode: 503,
    durationMs: 84,
    at: '2026-11-21T07:11:09.500Z',
    nextRetryAt: '2026-11-21T07:16:09.500Z',
  },
  sessionNotValid: SESSION_NOT_VALID_BODY,
  unauthorized: { message: 'Unauthorized', uid: null },
};

export const exampleProblems = {
  internal: problems.internal(EXAMPLE_IDS.error),
  /** A cart its location's menu does not allow (docs/menu.md). */
  menuMismatch: problems.menuMismatch([
    { row: 1, productId: 'sku-burger', code: 'price_mismatch', detail: 'sku-burger costs 1290, not 0' },
  ]),
  /** What store errors answer, as store-errors.ts words them. */
  storeUnreachable: storeProblem({ name: 'MongoServerSelectionError' }, EXAMPLE_IDS.error)!,
  constraint: storeProblem({ name: 'MongoServerError', code: 11000 }, EXAMPLE_IDS.error)!,
  database: storeProblem({ name: 'MongoServerError', code: 2, codeName: 'BadValue' }, EXAMPLE_IDS.error)!,
  /** What a transition's 503s say (JobClient): it may yet be applied, or it was not queued. */
  jobTimeout: problems.outcomeUnknown(false, 'the order'),
  jobNotQueued: problems.notQueued(true),
  malformedJson: problems.validation('Malformed JSON in request body'),
  locationNotFound: problems.notFound('Location does not exist'),
  /** A location a subscription or an operator account is given that does not exist. */
  unknownLocation: problems.unknownLocation(EXAMPLE_IDS.location),
  sessionNotFound: problems.notFound('Session does not exist'),
  webhookNotFound: problems.notFound('Webhook subscription does not exist'),
  operatorNotFound: problems.notFound('Operator does not exist'),
  orderNumber: problems.illegalArgument('Order number must be a positive integer'),
  notAccepting: problems.notAccepting('Location is paused until 2026-11-21T09:00:00.000Z (kitchen closed)'),
} satisfies Record<string, Problem>;
