/**
 * Examples for the document, made by the code's own serialisers from sample documents, so that
 * an example is what the service would send (the linter checks each against its schema too).
 */
import { SESSION_NOT_VALID_BODY } from '../auth/session-rules';
import { Problem, problems } from '../domain/problem';
import { toCommandRecord, toOperatorOrderRecord, toOrderRecord } from '../domain/records';
import type { CommandDoc, OrderDoc } from '../store/documents';
import { storeProblem } from '../store/store-errors';
import { toLocationView } from '../store/locations';
import { toSessionView } from '../store/sessions';

export const EXAMPLE_IDS = {
  location: '019a8f2c-5b1e-7c3d-9a40-2e6f1b7d8c90',
  session: '019a8f2d-0c4a-7e21-8b5f-4d3c2a1b0e9f',
  operator: '019a8f2b-1d2e-7f30-9b41-5c6d7e8f9a0b',
  audit: '019a8f31-2a3b-7c4d-8e5f-6a7b8c9d0e1f',
  request: 'b3c1e6a2-7d4f-4e1a-9c2b-8f5e3d1a0c47',
  error: '6f1c2d3e-4b5a-4c7d-8e9f-0a1b2c3d4e5f',
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

export const examples = {
  placedOrder: toOrderRecord(orderDoc),
  operatorOrder: toOperatorOrderRecord({ ...orderDoc, failureCount: 1, failedTime: at('07:12:00.000') }),
  completedOrder: toOrderRecord({ ...orderDoc, state: 'COMPLETED', completeTime: at('07:14:40.310') }),
  selectingOrder: toOrderRecord({ ...orderDoc, state: 'SELECTING', orderTime: undefined }),
  command: toCommandRecord(commandDoc),
  location: toLocationView({ _id: EXAMPLE_IDS.location, name: 'Main Street', failureThreshold: 3, orderSeq: 7, commandSeq: 3, createdAt: at('06:00:00.000') }),
  session: toSessionView({
    _id: EXAMPLE_IDS.session,
    type: 'SERVICE',
    locationId: EXAMPLE_IDS.location,
    keyHash: '',
    deviceId: 'register-1',
    createdAt: at('06:01:00.000'),
  }),
  operator: { id: EXAMPLE_IDS.operator, name: 'Main Street manager', role: 'manager', locationIds: [EXAMPLE_IDS.location], createdAt: '2026-11-21T05:50:00.000Z' },
  auditRecord: {
    id: EXAMPLE_IDS.audit,
    at: '2026-11-21T07:12:30.411Z',
    operatorId: EXAMPLE_IDS.operator,
    operatorName: 'Main Street manager',
    role: 'manager',
    method: 'POST',
    route: '/admin/v1/locations/:id/orders/:number/recover',
    targets: { id: EXAMPLE_IDS.location, number: '7' },
    locationId: EXAMPLE_IDS.location,
    status: 200,
    requestId: EXAMPLE_IDS.request,
  },
  apiKey: 'pos_D9YuS2GvbS-wEih4_-Yxpw0FdyZgyw8HLNBLYr8q2QaINhsuWx68d0bWEGiy6lZv',
  sessionNotValid: SESSION_NOT_VALID_BODY,
  unauthorized: { message: 'Unauthorized', uid: null },
};

export const exampleProblems = {
  internal: problems.internal(EXAMPLE_IDS.error),
  /** What store errors answer, as store-errors.ts words them. */
  storeUnreachable: storeProblem({ name: 'MongoServerSelectionError' }, EXAMPLE_IDS.error)!,
  constraint: storeProblem({ name: 'MongoServerError', code: 11000 }, EXAMPLE_IDS.error)!,
  database: storeProblem({ name: 'MongoServerError', code: 2, codeName: 'BadValue' }, EXAMPLE_IDS.error)!,
  /** What a transition's 503s say (JobClient): it may yet be applied, or it was not queued. */
  jobTimeout: problems.outcomeUnknown(false, 'the order'),
  jobNotQueued: problems.notQueued(true),
  malformedJson: problems.validation('Malformed JSON in request body'),
  locationNotFound: problems.notFound('Location does not exist'),
  sessionNotFound: problems.notFound('Session does not exist'),
  operatorNotFound: problems.notFound('Operator does not exist'),
  orderNumber: problems.illegalArgument('Order number must be a positive integer'),
} satisfies Record<string, Problem>;
