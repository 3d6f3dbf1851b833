/**
 * A location's orders, commands, history and event stream, for operators (the
 * admin API). One entry per operation, by its id (spec.ts).
 */
import { menuOrderSchema } from '../../schemas/menu';
import { CART_RULES } from './menus';
import { problems } from '../../domain/problem';
import { historyQuerySchema } from '../../schemas/history';
import { commandBodySchema, orderSchema, statusUpdateSchema } from '../../schemas/requests';
import { numberPageQuerySchema, orderListQuerySchema } from '../../schemas/queries';
import { commandRecordSchema, operatorOrderRecordSchema, orderRecordSchema } from '../../schemas/responses';
import { locationEventSchema, operatorOrderEventSchema } from '../components';
import { exampleProblems as ex, examples } from '../examples';
import { arrayOf, defineOperations, eventStream, json, P, paged, STREAM_PROBLEMS, streamCursorQuery } from './spec';

export const LOCATION_WORK_OPERATIONS = defineOperations({
  createCounterOrder: {
    method: 'post',
    path: '/admin/v1/locations/{id}/orders',
    tag: 'Admin',
    summary: 'Create a counter order (PLACED, no user)',
    description: `${CART_RULES} An operator may sell a product that is snoozed; its price is always the menu's.`,
    access: 'admin',
    criticality: 'normal',
    role: 'manager',
    bound: 'locations',
    traits: ['jsonBody'],
    params: [P.locationId],
    body: {
      schema: { anyOf: [menuOrderSchema, orderSchema] },
      example: {
        tableNumber: 4,
        rows: [{ productId: 'sku-burger', quantity: 2, modifiers: [{ productId: 'opt-cheddar' }] }],
      },
    },
    ok: { status: 201, description: 'The order, PLACED and announced', content: json(orderRecordSchema) },
    problems: [ex.locationNotFound, ex.menuMismatch],
  },
  listOrders: {
    method: 'get',
    path: '/admin/v1/locations/{id}/orders',
    tag: 'Admin',
    summary: "List a location's orders in a state",
    description: `${paged} By ascending number, each order with its failure count (the operator's view).`,
    access: 'admin',
    criticality: 'sheddable',
    role: 'viewer',
    bound: 'locations',
    params: [P.locationId],
    traits: ['paged'],
    query: orderListQuerySchema,
    ok: {
      status: 200,
      description: 'A page of orders',
      content: json(arrayOf(operatorOrderRecordSchema), [examples.operatorOrder]),
    },
    problems: [ex.locationNotFound, problems.required('state'), problems.noEnumConstant('EATEN')],
  },
  recoverOrder: {
    method: 'post',
    path: '/admin/v1/locations/{id}/orders/{number}/recover',
    tag: 'Admin',
    summary: 'Recover a FAILED order (back to PLACED, failure count reset)',
    access: 'admin',
    criticality: 'normal',
    role: 'manager',
    bound: 'locations',
    traits: ['queued'],
    params: [P.locationId, P.orderNumber],
    ok: { status: 200, description: 'The order, PLACED again and announced', content: json(orderRecordSchema) },
    problems: [
      ex.locationNotFound,
      problems.orderNotFound(),
      ex.orderNumber,
      problems.conflict('Order is COMPLETED; cannot recover'),
    ],
  },
  createCommand: {
    method: 'post',
    path: '/admin/v1/locations/{id}/commands',
    tag: 'Admin',
    summary: 'Create a command',
    access: 'admin',
    criticality: 'normal',
    role: 'manager',
    bound: 'locations',
    traits: ['jsonBody'],
    params: [P.locationId],
    body: { schema: commandBodySchema, example: { kind: 'FETCH_REMOTE_MENU' } },
    ok: { status: 201, description: 'The command, announced', content: json(commandRecordSchema) },
    problems: [ex.locationNotFound],
  },
  listCommands: {
    method: 'get',
    path: '/admin/v1/locations/{id}/commands',
    tag: 'Admin',
    summary: "List a location's live commands",
    description: `${paged} By ascending number; acknowledged and expired commands are gone.`,
    access: 'admin',
    criticality: 'sheddable',
    role: 'viewer',
    bound: 'locations',
    params: [P.locationId],
    traits: ['paged'],
    query: numberPageQuerySchema,
    ok: {
      status: 200,
      description: 'A page of commands',
      content: json(arrayOf(commandRecordSchema), [examples.command]),
    },
    problems: [ex.locationNotFound],
  },
  orderHistory: {
    method: 'get',
    path: '/admin/v1/locations/{id}/history',
    tag: 'Admin',
    summary: "A location's finished orders, from the archive",
    description:
      'COMPLETED and ABORTED orders once archived (`ORDER_ARCHIVE_AFTER`, 15 min, ' +
      'after they finished), by completion time, then number; ' +
      'completed in [`from`, `to`). A bare array like the other lists: a page that ' +
      'has a next one names it in `Link: <…>; rel="next"`, whose ' +
      '`after` is an opaque cursor.',
    access: 'admin',
    criticality: 'sheddable',
    role: 'viewer',
    bound: 'locations',
    params: [P.locationId],
    query: historyQuerySchema,
    ok: {
      status: 200,
      description: 'A page of finished orders',
      content: json(arrayOf(orderRecordSchema), [examples.completedOrder]),
      headers: ['Link'],
    },
    problems: [
      ex.locationNotFound,
      problems.illegalArgument('limit must be an integer from 1 to 1000'),
      problems.illegalArgument('from must be an ISO-8601 date-time'),
      problems.illegalArgument('after must be the cursor after an order of a previous page'),
    ],
  },
  updateOrderStatusForLocation: {
    method: 'put',
    path: '/admin/v1/locations/{id}/orders/{number}/statusupdate',
    tag: 'Admin',
    summary: "Update the status of an order on the location's behalf",
    description:
      "The register's status update (same queue, same state machine, same answers), for the operator's board.",
    access: 'admin',
    criticality: 'normal',
    role: 'manager',
    bound: 'locations',
    traits: ['jsonBody', 'queued'],
    params: [P.locationId, P.orderNumber],
    body: { schema: statusUpdateSchema, example: { newState: 'COMPLETED' } },
    ok: { status: 200, description: 'The updated order', content: json(orderRecordSchema, examples.completedOrder) },
    problems: [
      ex.locationNotFound,
      problems.noEnumConstant('EATEN'),
      problems.orderNotFound(),
      ex.orderNumber,
      problems.conflict('Order is COMPLETED; cannot move to ABORTED'),
    ],
  },
  acknowledgeCommandForLocation: {
    method: 'delete',
    path: '/admin/v1/locations/{id}/commands/{number}',
    tag: 'Admin',
    summary: "Acknowledge a command on the location's behalf",
    description: "As a register's acknowledgement: the command is no longer live.",
    access: 'admin',
    criticality: 'normal',
    role: 'manager',
    bound: 'locations',
    params: [P.locationId, P.commandNumber],
    ok: { status: 200, description: 'The acknowledged command', content: json(commandRecordSchema, examples.command) },
    problems: [
      ex.locationNotFound,
      problems.commandNotFound(),
      problems.illegalArgument('Command number must be a positive integer'),
    ],
  },
  streamLocationWork: {
    method: 'get',
    path: '/admin/v1/locations/{id}/stream',
    tag: 'Event stream',
    summary: "Follow a location's work as server-sent events, as an operator",
    description:
      "The register stream's events, cursor, replay, keepalives, timeout and end " +
      'at shutdown, for the admin token; each order carries ' +
      'its `failureCount` (and `overdue: true` once its placement is ' +
      'overdue, announced once as an order event of its own). ' +
      '`location` events announce presence and pause changes (they leave the cursor as it is). It ' +
      'has no session to close or expire: the token is checked when it opens.',
    access: 'admin',
    criticality: 'exempt',
    role: 'viewer',
    bound: 'locations',
    params: [P.locationId, P.lastEventId],
    query: streamCursorQuery,
    ok: eventStream(operatorOrderEventSchema, examples.operatorOrder, [locationEventSchema]),
    problems: [
      ex.locationNotFound,
      ...STREAM_PROBLEMS,
      problems.tooManyRequests('This node holds its limit of 2500 operator streams; the rest is kept for registers'),
    ],
  },
});
