/**
 * `npm run demo`: the service on its embedded default (as `npm start`), a location with a register
 * and a few tables, customer apps ordering through the customer API and a register serving them
 * through the register interface, all over real HTTP. Orders show in the log, on the event stream,
 * on the live board (/board) and in Bull Board. Runs until Ctrl-C, or for `--rounds N` rounds (env DEMO_ROUNDS).
 *
 * Options: --rounds N (0: until Ctrl-C), --tables N (default 3), --pace MS (default 1500).
 */
import net from 'node:net';
import { parseArgs } from 'node:util';
import { AdminClient } from '@pos/shared/clients/admin-client';
import { RegisterClient } from '@pos/shared/clients/register/client';
import { loadConfig } from '@pos/shared/config';
import { createLogger } from '@pos/shared/log';
import { onShutdown, runMain } from '@pos/shared/process/shutdown';
import { pause } from '@pos/shared/util/pause';
import { CustomerApp } from './demo/customer-app';
import { PaceReport } from './demo/pace-report';
import { RegisterDesk } from './demo/register-desk';
import { EmbeddedService } from './embedded/embedded-service';

function options() {
  const { values } = parseArgs({
    options: {
      rounds: { type: 'string', default: process.env.DEMO_ROUNDS ?? '0' },
      tables: { type: 'string', default: process.env.DEMO_TABLES ?? '3' },
      pace: { type: 'string', default: process.env.DEMO_PACE ?? '1500' },
    },
  });
  const count = (name: string, value: string, min: number) => {
    if (!/^[0-9]+$/.test(value) || Number(value) < min)
      throw new Error(`--${name} must be a whole number of at least ${min}, not ${value}`);
    return Number(value);
  };
  return {
    rounds: count('rounds', values.rounds, 0),
    tables: count('tables', values.tables, 1),
    paceMs: count('pace', values.pace, 10),
  };
}

const say = (line: string) => process.stdout.write(`demo │ ${line}\n`);

/**
 * Orders by final state: those still in the hot collection, then the archived ones (history). The
 * lifecycle job copies before it deletes, so reading in this order misses none; sets count twice none.
 */
async function finishedCounts(
  admin: AdminClient,
  locationId: string,
): Promise<Record<'COMPLETED' | 'ABORTED' | 'FAILED', number>> {
  const numbers = { COMPLETED: new Set<number>(), ABORTED: new Set<number>(), FAILED: new Set<number>() };
  for (const state of ['COMPLETED', 'ABORTED', 'FAILED'] as const) {
    for (const order of await admin.allOrders(locationId, state)) numbers[state].add(order.number);
  }
  for (const order of await admin.allHistory(locationId)) {
    if (order.state === 'COMPLETED' || order.state === 'ABORTED') numbers[order.state].add(order.number);
  }
  return { COMPLETED: numbers.COMPLETED.size, ABORTED: numbers.ABORTED.size, FAILED: numbers.FAILED.size };
}

/** Whether a port on this machine is free to listen on. */
function portFree(port: number): Promise<boolean> {
  const server = net.createServer();
  return new Promise((resolve) => {
    server.once('error', () => resolve(false));
    server.listen(port, () => server.close(() => resolve(true)));
  });
}

const config = loadConfig();
const log = createLogger(config.process.logLevel, 'pos');

runMain(log, async () => {
  const { rounds, tables, paceMs } = options();
  // Beside a running `npm start` (on PORT's default), the demo takes a free port and says where.
  if (!process.env.PORT && !(await portFree(config.http.port))) {
    say(`port ${config.http.port} is taken (by npm start?): the demo listens on a free port`);
    config.http.port = 0;
  }
  const service = new EmbeddedService(config, log);
  const stopping = new AbortController();
  let running: Promise<unknown> = Promise.resolve();

  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      say('stopping');
      stopping.abort();
      await running.catch(() => undefined);
      await service.close();
      say('stopped');
    })());
  onShutdown(log, config.process.shutdownGraceMs, stop);

  await service.start();
  if (stopping.signal.aborted) return; // Ctrl-C during start-up: stop() takes it from here.

  const { operatorOrigin, baseUrl } = service;
  const admin = new AdminClient(operatorOrigin, config.auth.adminToken!);
  const location = await admin.createLocation('Demo Bistro');
  const register = await admin.createServiceSession(location.id, 'demo-register');
  const random = Math.random;
  const apps = Array.from(
    { length: tables },
    (_, i) => new CustomerApp(admin, baseUrl, location.id, i + 1, random, say),
  );
  for (const app of apps) await app.sitDown();

  process.stdout.write(
    [
      '',
      `POS ordering service demo at ${baseUrl}`,
      `  location "${location.name}" (${location.id}), ${tables} tables, a register polling every ${paceMs} ms`,
      `  event stream:  curl -N -H 'api_key: ${register.apiKey}' ${baseUrl}/notifications/service/stream`,
      `  register work: curl -H 'api_key: ${register.apiKey}' ${baseUrl}/orders/location`,
      `  Bull Board:    ${operatorOrigin}/admin/queues  (user name: ` +
        `anything, e.g. admin; password: ${config.auth.adminToken})`,
      `  live board:    ${operatorOrigin}/board  (kitchen: the register key above; ` +
        `operator: the admin token and location id ${location.id})`,
      `  ${rounds ? `${rounds} rounds, then it stops by itself` : 'Ctrl-C stops it'}`,
      '',
    ].join('\n') + '\n',
  );

  const desk = new RegisterDesk(new RegisterClient({ baseUrl, apiKey: register.apiKey }), paceMs, say);
  const deskDone = desk.run(stopping.signal);
  const pace = new PaceReport(
    operatorOrigin,
    config.auth.adminToken!,
    { latencies: () => desk.takeLatencies(), orders: () => apps.reduce((n, app) => n + app.ordersSubmitted, 0) },
    say,
  );
  pace.start();
  stopping.signal.addEventListener('abort', () => pace.stop());

  const play = async () => {
    for (let round = 1; !stopping.signal.aborted && (rounds === 0 || round <= rounds); round++) {
      say(`round ${round}`);
      // Every third round one table's guest walks out right after ordering.
      const walker = round % 3 === 0 ? (round / 3 - 1) % apps.length : -1;
      await Promise.all(
        apps.map(async (app, i) => {
          await pause((i * paceMs) / apps.length, stopping.signal);
          if (!stopping.signal.aborted) await app.order(paceMs, stopping.signal, i === walker);
        }),
      );
      await pause(paceMs, stopping.signal);
    }
    if (stopping.signal.aborted) return;
    // Let the register serve what is left, then the guests leave.
    const after = desk.polls;
    while (!desk.idleAfter(after) && !stopping.signal.aborted) await pause(100, stopping.signal);
    for (const app of apps) await app.leave();
    await pace.finish();
    const { COMPLETED: completed, ABORTED: aborted, FAILED: failed } = await finishedCounts(admin, location.id);
    say(
      `done after ${rounds} rounds: ${completed} orders completed, ${aborted} aborted, ${failed} failed; ` +
        `${desk.failuresReported} failures reported, ${desk.commandsAcknowledged} commands acknowledged`,
    );
    const [first, last] = [pace.minutes[0], pace.minutes[pace.minutes.length - 1]];
    if (first && last && last !== first) {
      say(
        `register status-update p50: ${first.p50Ms} ms in minute 1, ${last.p50Ms} ms ` +
          `at the end (minute ${last.minute}, ${last.orders} orders)`,
      );
    }
  };

  const playing = play();
  running = Promise.allSettled([playing, deskDone]);
  try {
    await playing;
  } catch (err) {
    if (stopping.signal.aborted) return;
    log.error({ err }, 'demo failed');
    await stop();
    process.exit(1);
  }
  if (rounds > 0 && !stopping.signal.aborted) {
    await stop();
    process.exit(0);
  }
});
