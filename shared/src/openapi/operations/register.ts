/**
 * The register interface (docs/register-interface.md, part 4) and its event stream
 * (part 6). One entry per operation, by its id (spec.ts).
 */
import { problems } from '../../domain/problem';
import { failureReportSchema, statusUpdateSchema } from '../../schemas/requests';
import { commandRecordSchema, orderRecordSchema } from '../../schemas/responses';
import { orderEventSchema } from '../components';
import { exampleProblems as ex, examples } from '../examples';
import { arrayOf, defineOperations, eventStream, json, P, STREAM_PROBLEMS, streamCursorQuery } from './spec';

export const REGISTER_OPERATIONS = defineOperations({
  listWork: {
    method: 'get',
    path: '{base}/orders/location',
    tag: 'Register',
    summary: "List the location's work",
    description:
      'A bare array: the PLACED orders by ascending number, then the live commands ' +
      'by ascending number (a record with `rows` is an order).',
    access: 'register',
    criticality: 'exempt',
    ok: {
      status: 200,
      description: 'The work',
      content: json(arrayOf({ oneOf: [orderRecordSchema, commandRecordSchema] }), [
        examples.placedOrder,
        examples.command,
      ]),
    },
  },
  updateOrderStatus: {
    method: 'put',
    path: '{base}/orders/{number}/statusupdate',
    tag: 'Register',
    summary: 'Update the status of an order',
    description:
      'COMPLETED and ABORTED from PLACED (`completeTime` set); FAILED is a ' +
      'failure report; PLACED from FAILED is operator recovery. ' +
      'Repeating the current state answers 200 and changes nothing; any other move is a 409 naming the current state.',
    access: 'register',
    criticality: 'critical',
    traits: ['jsonBody', 'queued'],
    params: [P.orderNumber],
    body: { schema: statusUpdateSchema, example: { newState: 'COMPLETED' } },
    ok: { status: 200, description: 'The updated order', content: json(orderRecordSchema, examples.completedOrder) },
    problems: [
      problems.noEnumConstant('EATEN'),
      problems.orderNotFound(),
      ex.orderNumber,
      problems.conflict('Order is COMPLETED; cannot move to ABORTED'),
    ],
  },
  reportOrderFailure: {
    method: 'post',
    path: '{base}/orders/{number}/failure',
    tag: 'Register',
    summary: 'Report a processing failure',
    description:
      "Adds one to the order's failure count and sets `failedTime`. Below the " +
      "location's failure threshold the order goes back to PLACED " +
      '(and is announced again); at the threshold it stays FAILED until an operator ' +
      'recovers it. A report on a FAILED order changes nothing.',
    access: 'register',
    criticality: 'critical',
    traits: ['jsonBody', 'queued'],
    params: [P.orderNumber],
    body: { schema: failureReportSchema, example: { reason: 'printer jam' }, required: false },
    ok: {
      status: 200,
      description: 'The order after the report',
      content: json(orderRecordSchema, examples.placedOrder),
    },
    problems: [
      problems.orderNotFound(),
      ex.orderNumber,
      problems.conflict('Order is COMPLETED; cannot report a failure'),
    ],
  },
  acknowledgeCommand: {
    method: 'delete',
    path: '{base}/commands/{number}',
    tag: 'Register',
    summary: 'Acknowledge a command',
    description: 'Removes a live command; it no longer appears in the work or the replay.',
    access: 'register',
    criticality: 'critical',
    params: [P.commandNumber],
    ok: { status: 200, description: 'The acknowledged command', content: json(commandRecordSchema, examples.command) },
    problems: [problems.commandNotFound(), problems.illegalArgument('Command number must be a positive integer')],
  },
  streamWork: {
    method: 'get',
    path: '{base}/notifications/service/stream',
    tag: 'Event stream',
    summary: "Follow the location's work as server-sent events",
    description:
      'Starts with `retry: 1000`, replays the PLACED orders above `orderNumber` and ' +
      'the live commands above `commandNumber` (all when absent), ' +
      'then streams live events with no gap and no repeat. Events: `order` (the order ' +
      'record, whenever an order becomes PLACED or leaves it) and ' +
      '`command` (the command record, when created); each id is the cursor ' +
      '`<orderNumber>.<commandNumber>`. A `: keepalive` comment comes every ' +
      '`SSE_KEEPALIVE` (15 s). The server ends the stream after `SSE_TIMEOUT` (30 ' +
      'min), when the session is closed or expires, when the key ' +
      'it was opened with is retired by a rotation, and at shutdown: reconnect with the cursor, then poll the work (part 6.2).\n\n' +
      'The body is described as the sequence of its events (as OpenAPI 3.2 ' +
      'describes sequential media types): each item is one event, ' +
      'its `data` the record as JSON.',
    access: 'register',
    criticality: 'exempt',
    params: [P.lastEventId],
    query: streamCursorQuery,
    ok: eventStream(orderEventSchema, examples.placedOrder),
    problems: STREAM_PROBLEMS,
  },
});
