/**
 * The admin command-line tool: the admin API from a shell. Prints JSON answers on stdout.
 *   POS_URL=http://localhost:8080 ADMIN_TOKEN=... npm run admin -- <command> [args]
 */
import { parseArgs } from 'node:util';
import { AdminClient } from '@pos/shared/clients/admin-client';
import { ApiError } from '@pos/shared/clients/json-http';
import { COMMAND_KINDS, CommandKind } from '@pos/shared/domain/commands';
import { isOrderState } from '@pos/shared/domain/order-state';
import type { RowInput } from '@pos/shared/schemas/requests';

const USAGE = `usage: npm run admin -- <command> [args] [options]

commands:
  create-location <name> [--failure-threshold N]
  create-service-session <locationId> <deviceId> [--expires-at ISO-8601]
  create-customer-session <locationId> <userNumber> [--table N]
  close-session <sessionId>
  create-order <locationId> <rows as JSON> [--table N]     a counter order, created PLACED
  create-command <locationId> <${COMMAND_KINDS.join('|')}> [--table N]
  list-orders <locationId> <state>
  recover-order <locationId> <orderNumber>
  history <locationId> [--from ISO-8601] [--to ISO-8601] [--limit N] [--after CURSOR] [--all]
                                                           archived finished orders by completion time;
                                                           a page with its next cursor, or with --all
                                                           every page's orders in one list

environment: POS_URL (default http://localhost:8080), ADMIN_TOKEN (required)`;

class UsageError extends Error {}

function int(value: string | undefined, what: string): number {
  if (!value || !/^[0-9]+$/.test(value)) throw new UsageError(`${what} must be a whole number`);
  return Number(value);
}

async function run(admin: AdminClient, command: string | undefined, args: string[], opts: Record<string, string | undefined> & { all?: boolean }) {
  const [a, b] = args;
  const need = (n: number) => {
    if (args.length < n) throw new UsageError(`${command} needs ${n} argument(s)`);
  };
  const table = opts.table === undefined ? undefined : int(opts.table, '--table');
  switch (command) {
    case 'create-location':
      need(1);
      return admin.createLocation(a!, opts['failure-threshold'] ? int(opts['failure-threshold'], '--failure-threshold') : undefined);
    case 'create-service-session':
      need(2);
      return admin.createServiceSession(a!, b!, opts['expires-at']);
    case 'create-customer-session':
      need(2);
      return admin.createCustomerSession(a!, int(b, 'userNumber'), table);
    case 'close-session':
      need(1);
      await admin.closeSession(a!);
      return { closed: a };
    case 'create-order':
      need(2);
      return admin.createOrder(a!, JSON.parse(b!) as RowInput[], table);
    case 'create-command':
      need(2);
      if (!(COMMAND_KINDS as readonly string[]).includes(b!)) throw new UsageError(`kind must be one of ${COMMAND_KINDS.join(', ')}`);
      return admin.createCommand(a!, b as CommandKind, table);
    case 'list-orders':
      need(2);
      if (!isOrderState(b!)) throw new UsageError(`unknown state ${b}`);
      return admin.listOrders(a!, b);
    case 'recover-order':
      need(2);
      return admin.recoverOrder(a!, int(b, 'orderNumber'));
    case 'history': {
      need(1);
      const query = { from: opts.from, to: opts.to, limit: opts.limit === undefined ? undefined : int(opts.limit, '--limit'), after: opts.after };
      if (!opts.all) return admin.orderHistory(a!, query);
      const orders = [];
      for (let page = await admin.orderHistory(a!, query); ; page = await admin.orderHistory(a!, { ...query, after: page.next })) {
        orders.push(...page.orders);
        if (!page.next) return orders;
      }
    }
    default:
      throw new UsageError(command ? `unknown command ${command}` : 'no command given');
  }
}

async function main(): Promise<number> {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      'failure-threshold': { type: 'string' },
      'expires-at': { type: 'string' },
      table: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      limit: { type: 'string' },
      after: { type: 'string' },
      all: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const token = process.env.ADMIN_TOKEN;
  if (!token) throw new UsageError('ADMIN_TOKEN is not set');
  const admin = new AdminClient(process.env.POS_URL ?? 'http://localhost:8080', token);
  const [command, ...args] = positionals;
  const result = await run(admin, command, args, values as Record<string, string | undefined> & { all?: boolean });
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof UsageError) process.stderr.write(`${err.message}\n\n${USAGE}\n`);
    else if (err instanceof ApiError) process.stderr.write(`error: ${err.message}\n`);
    else process.stderr.write(`error: ${(err as Error).message}\n`);
    process.exit(err instanceof UsageError ? 2 : 1);
  },
);
