/**
 * `npm run admin` for the admin surface: lists page by page (the next page named on stderr),
 * a location changed, a session's key rotated; JSON on stdout.
 */
import { runToEnd } from '../support/process-groups';
import path from 'node:path';
import { call } from '../support/http';
import { registerAt } from '../support/fixtures';
import { ROOT, useStack } from '../support/stack';

describe('npm run admin', () => {
  const stack = useStack();

  /** Runs the tool as `npm run admin -- ...` does; its exit code, stdout and stderr. */
  function admin(...args: string[]): Promise<{ code: number; out: string; err: string }> {
    return adminWith({ ADMIN_TOKEN: stack.env.ADMIN_TOKEN! }, ...args);
  }

  /** The tool with these token variables (and no other from this process). */
  function adminWith(
    tokens: Record<string, string>,
    ...args: string[]
  ): Promise<{ code: number; out: string; err: string }> {
    const { ADMIN_TOKEN: _root, POS_ADMIN_TOKEN: _operator, ...env } = process.env;
    return runToEnd(process.execPath, ['--require', 'tsx/cjs', path.join(ROOT, 'scripts', 'admin.ts'), ...args], {
      cwd: ROOT,
      env: { ...env, POS_URL: stack.origin, ...tokens },
    }).then(({ code, out, err }) => ({ code: code ?? 1, out, err }));
  }

  it('lists locations a page at a time, and changes one', async () => {
    const first = await stack.admin.createLocation('Cli one');
    const second = await stack.admin.createLocation('Cli two');
    const page = await admin('list-locations', '--limit', '1');
    expect(page.code).toBe(0);
    expect(JSON.parse(page.out)).toEqual([first]);
    expect(page.err).toBe(`next page: --after ${first.id}\n`);
    expect(JSON.parse((await admin('list-locations', '--after', first.id)).out)).toEqual([second]);

    const changed = await admin(
      'update-location',
      second.id,
      '--name',
      'Cli renamed',
      '--failure-threshold',
      '5',
      '--order-deadline',
      '15m',
    );
    expect(JSON.parse(changed.out)).toEqual({
      ...second,
      name: 'Cli renamed',
      failureThreshold: 5,
      orderDeadline: '15m',
    });
    expect(await stack.admin.getLocation(second.id)).toEqual({
      ...second,
      name: 'Cli renamed',
      failureThreshold: 5,
      orderDeadline: '15m',
    });
    expect((await admin('update-location', second.id)).code).toBe(2);
  });

  it('pauses and resumes a location, shows its presence and lists the dark ones', async () => {
    const { location } = await registerAt(stack, 'Cli pause');
    const paused = await admin('pause', location.id, '--until', '2099-01-01T00:00:00.000Z', '--reason', 'closed');
    expect(JSON.parse(paused.out)).toMatchObject({
      id: location.id,
      paused: true,
      pausedUntil: '2099-01-01T00:00:00.000Z',
      pauseReason: 'closed',
    });
    expect(JSON.parse((await admin('resume', location.id)).out)).toMatchObject({ id: location.id, paused: false });
    expect(JSON.parse((await admin('presence', location.id)).out)).toMatchObject({ online: false, registers: [] });
    expect(
      JSON.parse((await admin('list-locations', '--online', 'false', '--limit', '1000')).out).map(
        (l: { id: string }) => l.id,
      ),
    ).toContain(location.id);
    expect((await admin('list-locations', '--online', 'maybe')).code).toBe(2);
  });

  it('a wrong argument names the valid values and prints the usage of that command alone', async () => {
    const location = await stack.admin.createLocation('Cli usage');
    const wrong = await admin('list-orders', location.id, 'placed');
    expect(wrong.code).toBe(2);
    expect(wrong.err).toBe(
      'unknown state placed: the states are SELECTING, NEW, PLACED, COMPLETED, ABORTED, FAILED\n\n' +
        'usage (npm run admin -- <command>; --help for every command):\n' +
        '  list-orders <locationId> <state> [--limit N] [--after N] [--overdue true|false]\n',
    );
    const history = await admin('history');
    expect(history.err).toMatch(
      /^history needs 1 argument\(s\)\n\nusage \(npm run admin -- <command>; --help for every command\):\n {2}history <locationId>.*\n {10,}archived finished orders.*\n {10,}.*\n {10,}every page's orders in one list\n$/,
    );
  });

  it('subscribes an endpoint to webhooks, changes it, rotates its secret and removes it', async () => {
    const location = await stack.admin.createLocation('Cli webhooks');
    // A public address literal: no DNS, and no event of this location is ever sent.
    const created = await admin(
      'create-webhook',
      'https://93.184.215.14/hooks',
      'order.placed,order.completed',
      '--locations',
      location.id,
      '--description',
      'analytics',
    );
    expect(created.code).toBe(0);
    const sub = JSON.parse(created.out);
    expect(sub).toMatchObject({
      url: 'https://93.184.215.14/hooks',
      events: ['order.placed', 'order.completed'],
      locationIds: [location.id],
      description: 'analytics',
    });
    expect(sub.secret).toMatch(/^whsec_/);
    const changed = await admin('update-webhook', sub.id, '--events', 'order.failed', '--locations', 'all');
    expect(JSON.parse(changed.out)).toMatchObject({ id: sub.id, events: ['order.failed'] });
    expect(JSON.parse(changed.out)).not.toHaveProperty('locationIds');
    expect(JSON.parse((await admin('list-webhooks')).out).map((w: { id: string }) => w.id)).toContain(sub.id);
    const rotated = JSON.parse((await admin('rotate-webhook-secret', sub.id)).out);
    expect(rotated.secret).not.toBe(sub.secret);
    expect(JSON.parse((await admin('get-webhook', sub.id)).out)).not.toHaveProperty('secret');
    expect((await admin('create-webhook', 'http://127.0.0.1/hooks', 'order.placed')).code).toBe(1);
    expect((await admin('delete-webhook', sub.id)).code).toBe(0);
    expect((await admin('get-webhook', sub.id)).code).toBe(1);
  });

  it("rotates a session's key and lists the sessions without keys", async () => {
    const { location, key, sessionId } = await registerAt(stack, 'Cli keys');
    const rotated = await admin('rotate-key', sessionId);
    expect(rotated.code).toBe(0);
    const { apiKey, previousKeyExpiresAt } = JSON.parse(rotated.out);
    expect((await call('GET', `${stack.baseUrl}/orders/location`, { apiKey })).status).toBe(200);
    expect((await call('GET', `${stack.baseUrl}/orders/location`, { apiKey: key })).status).toBe(200);

    const sessions = await admin('list-sessions', location.id);
    expect(JSON.parse(sessions.out)).toEqual([expect.objectContaining({ sessionId, previousKeyExpiresAt })]);
    expect(sessions.out).not.toContain(apiKey.slice(4));
    expect(sessions.err).toBe('');

    const unknown = await admin('rotate-key', 'no-such-session');
    expect(unknown.code).toBe(1);
    expect(unknown.err).toMatch(/404 Not found: Session does not exist/);
  });

  it('manages operators, and acts as one with --token or POS_ADMIN_TOKEN', async () => {
    const location = await stack.admin.createLocation('Cli operators');
    const created = await admin('create-operator', 'Cli manager', 'manager', '--locations', location.id);
    expect(created.code).toBe(0);
    const operator = JSON.parse(created.out);
    expect(operator).toMatchObject({ name: 'Cli manager', role: 'manager', locationIds: [location.id] });
    expect(JSON.parse((await admin('update-operator', operator.id, '--role', 'viewer')).out)).toMatchObject({
      role: 'viewer',
    });

    // its token, from the command line or the environment: a viewer of one location
    for (const [tokens, args] of [
      [{}, ['--token', operator.token]],
      [{ POS_ADMIN_TOKEN: operator.token }, []],
    ] as const) {
      const listed = await adminWith(tokens, 'list-locations', ...args);
      expect(JSON.parse(listed.out)).toEqual([location]);
      const refused = await adminWith(tokens, 'create-location', 'Not mine', ...args);
      expect(refused.code).toBe(1);
      expect(refused.err).toMatch(/403 Forbidden/);
    }
    expect((await adminWith({}, 'list-locations')).code).toBe(2);

    const audit = JSON.parse((await admin('audit', '--operator', operator.id)).out);
    expect(audit).toEqual([
      expect.objectContaining({ method: 'POST', route: '/admin/v1/locations', status: 403 }),
      expect.objectContaining({ method: 'POST', route: '/admin/v1/locations', status: 403 }),
    ]);
    expect(JSON.parse((await admin('delete-operator', operator.id)).out)).toEqual({ deleted: operator.id });
    expect((await adminWith({ POS_ADMIN_TOKEN: operator.token }, 'list-locations')).code).toBe(1);
  });
});
