/** The customer app's side of an order, and its session. One entry per operation, by its id (spec.ts). */
import { problems } from '../../domain/problem';
import { menuOrderSchema, menuRowsBodySchema } from '../../schemas/menu';
import { customerCommandBodySchema, orderSchema, rowsBodySchema } from '../../schemas/requests';
import { commandRecordSchema, orderRecordSchema } from '../../schemas/responses';
import { exampleProblems as ex, examples } from '../examples';
import { CART_RULES } from './menus';
import { defineOperations, json, P, TRANSITION_DESCRIPTION } from './spec';

const RULES = CART_RULES;
const MISMATCH = ex.menuMismatch;

export const CUSTOMER_OPERATIONS = defineOperations({
  createCustomerOrder: {
    method: 'post',
    path: '{base}/customer/orders',
    tag: 'Customer app',
    summary: 'Open an order (SELECTING)',
    description:
      'Registers do not see it until it is submitted. `userNumber` comes from the ' +
      'session, `tableNumber` from the body or else the session. ' +
      'A session has at most `CUSTOMER_MAX_OPEN_ORDERS` (5) open orders ' +
      '(SELECTING, NEW, PLACED or FAILED); beyond, a 429. ' +
      RULES,
    access: 'customer',
    criticality: 'normal',
    traits: ['jsonBody'],
    body: {
      schema: { anyOf: [menuOrderSchema, orderSchema] },
      example: { rows: [{ productId: 'sku-burger', quantity: 2, modifiers: [{ productId: 'opt-cheese' }] }] },
    },
    ok: { status: 201, description: 'The order, SELECTING', content: json(orderRecordSchema, examples.selectingOrder) },
    problems: [
      ex.locationNotFound,
      problems.tooManyRequests(
        'This session already has 5 open orders; another can be opened once one is completed or aborted',
      ),
      ex.notAccepting,
      MISMATCH,
    ],
  },
  getCustomerOrder: {
    method: 'get',
    path: '{base}/customer/orders/{number}',
    tag: 'Customer app',
    summary: 'Read one of the session’s orders',
    access: 'customer',
    criticality: 'normal',
    params: [P.orderNumber],
    ok: { status: 200, description: 'The order', content: json(orderRecordSchema, examples.placedOrder) },
    problems: [problems.orderNotFound(), ex.orderNumber],
  },
  replaceOrderRows: {
    method: 'put',
    path: '{base}/customer/orders/{number}/rows',
    tag: 'Customer app',
    summary: 'Replace the rows of a SELECTING order',
    description: `The rows are priced now; the order keeps these prices when the menu changes later. ${RULES}`,
    access: 'customer',
    criticality: 'normal',
    traits: ['jsonBody'],
    params: [P.orderNumber],
    body: {
      schema: { anyOf: [menuRowsBodySchema, rowsBodySchema] },
      example: { rows: [{ productId: 'sku-burger', quantity: 1, notes: 'no onions' }] },
    },
    ok: { status: 200, description: 'The order with its new rows', content: json(orderRecordSchema) },
    problems: [
      problems.orderNotFound(),
      ex.orderNumber,
      problems.conflict('Order is NEW; cannot replace rows'),
      problems.concurrentModification(),
      MISMATCH,
    ],
  },
  finishOrder: {
    method: 'post',
    path: '{base}/customer/orders/{number}/finish',
    tag: 'Customer app',
    summary: 'Finish adding items (SELECTING to NEW)',
    description: TRANSITION_DESCRIPTION,
    access: 'customer',
    criticality: 'normal',
    traits: ['queued'],
    params: [P.orderNumber],
    ok: { status: 200, description: 'The order after the transition', content: json(orderRecordSchema) },
    problems: [
      problems.orderNotFound(),
      ex.orderNumber,
      problems.conflict('Order is SELECTING; cannot finish'),
      problems.conflict('Session is closed; cannot finish'),
    ],
  },
  submitOrder: {
    method: 'post',
    path: '{base}/customer/orders/{number}/submit',
    tag: 'Customer app',
    summary: 'Submit the order (NEW to PLACED, announced to the registers)',
    description:
      `${TRANSITION_DESCRIPTION} A product of the order snoozed since its rows were priced is a ` +
      `422 \`Menu mismatch\` (\`product_unavailable\`), and the order stays NEW.`,
    access: 'customer',
    criticality: 'normal',
    traits: ['queued'],
    params: [P.orderNumber],
    ok: { status: 200, description: 'The order after the transition', content: json(orderRecordSchema) },
    problems: [
      problems.orderNotFound(),
      ex.orderNumber,
      problems.conflict('Order is SELECTING; cannot submit'),
      problems.conflict('Session is closed; cannot submit'),
      ex.notAccepting,
      problems.menuMismatch([
        {
          row: 1,
          productId: 'sku-burger',
          code: 'product_unavailable',
          detail: 'sku-burger is unavailable until 2026-11-21T18:00:00.000Z',
        },
      ]),
    ],
  },
  createCustomerCommand: {
    method: 'post',
    path: '{base}/customer/commands',
    tag: 'Customer app',
    summary: 'Ask for the table state or the bill',
    access: 'customer',
    criticality: 'normal',
    traits: ['jsonBody'],
    body: { schema: customerCommandBodySchema, example: { kind: 'REQUEST_BILL' } },
    ok: { status: 201, description: 'The command', content: json(commandRecordSchema, examples.command) },
    problems: [problems.validation('kind must be one of READ_TABLE_STATE, REQUEST_BILL'), ex.locationNotFound],
  },
  closeOwnSession: {
    method: 'delete',
    path: '{base}/customer/session',
    tag: 'Customer app',
    summary: "Close the caller's own session",
    description: 'Its PLACED orders are aborted; its key then answers the text/plain 401.',
    access: 'customer',
    criticality: 'normal',
    traits: ['queued'],
    partitionBy: 'session',
    ok: { status: 204, description: 'Closed' },
  },
});
