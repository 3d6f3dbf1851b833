/**
 * The record types are derived from the response schemas (json-schema-to-ts), so they cannot
 * drift at compile time; here the serialisers' output, fullest and barest, is held against the
 * same schemas at run time (as every response of the integration tests is, by the contract check).
 */
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { COMMAND_KINDS } from '@pos/shared/domain/commands';
import { ORDER_STATES } from '@pos/shared/domain/order-state';
import { PROBLEM_KINDS, problemBody, problemOf } from '@pos/shared/domain/problem';
import { CommandDoc, OrderDoc, toCommandRecord, toOrderRecord } from '@pos/shared/domain/records';
import {
  commandRecordSchema,
  orderRecordSchema,
  problemBodySchema,
  sessionViewSchema,
} from '@pos/shared/schemas/responses';
import { SessionDoc } from '@pos/shared/store/sessions';
import { toSessionView } from '@pos/shared/domain/views';

const ajv = new Ajv2020({ strict: true, allErrors: true });
addFormats(ajv);
const check = (schema: object, value: unknown) => {
  const validate = ajv.compile(schema);
  return validate(value) ? [] : validate.errors;
};

const at = new Date('2026-11-21T07:11:04.092Z');
const order: OrderDoc = {
  _id: 'l:1',
  locationId: 'l',
  number: 1,
  state: 'PLACED',
  version: 0,
  failureCount: 0,
  appliedJobs: [],
  rows: [{ rowNumber: 1, productId: 'p', name: 'n', quantity: 1, unitPrice: 0 }],
  guestCount: 1,
  createdAt: at,
  updatedAt: at,
};

describe('the response schemas describe what the serialisers produce', () => {
  it('orders, in every state, barest and fullest', () => {
    for (const state of ORDER_STATES) {
      expect(check(orderRecordSchema, toOrderRecord({ ...order, state }))).toEqual([]);
      const full = {
        ...order,
        state,
        tableNumber: 4,
        userNumber: 9,
        orderTime: at,
        completeTime: at,
        failedTime: at,
        rows: [{ ...order.rows[0]!, notes: 'x' }],
      };
      expect(check(orderRecordSchema, toOrderRecord(full))).toEqual([]);
    }
    expect(check(orderRecordSchema, { ...toOrderRecord(order), tableNumber: null })).not.toEqual([]);
  });

  it('commands of every kind', () => {
    for (const kind of COMMAND_KINDS) {
      const doc: CommandDoc = { _id: 'l:1', locationId: 'l', number: 1, kind, createdAt: at, expiresAt: at };
      expect(check(commandRecordSchema, toCommandRecord(doc))).toEqual([]);
      expect(check(commandRecordSchema, toCommandRecord({ ...doc, tableNumber: 3 }))).toEqual([]);
    }
  });

  it('sessions, never with their key hashes', () => {
    const doc: SessionDoc = {
      _id: 's',
      type: 'CUSTOMER',
      locationId: 'l',
      keyHash: 'h',
      previousKeyHash: 'p',
      userNumber: 1,
      tableNumber: 2,
      createdAt: at,
      expiresAt: at,
      closedAt: at,
      keyRotatedAt: at,
      previousKeyExpiresAt: at,
    };
    expect(check(sessionViewSchema, toSessionView(doc))).toEqual([]);
    expect(JSON.stringify(toSessionView(doc))).not.toMatch(/"h"|"p"/);
  });

  it('problems of every kind', () => {
    for (const kind of Object.keys(PROBLEM_KINDS) as (keyof typeof PROBLEM_KINDS)[]) {
      expect(check(problemBodySchema, problemBody(problemOf(kind, 'detail'), '/x'))).toEqual([]);
    }
  });
});
