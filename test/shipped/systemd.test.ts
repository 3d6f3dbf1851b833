/**
 * deploy/systemd: each role's unit runs what its image runs (the Dockerfile's CMD), with the
 * image's Node settings, stops with SIGTERM within a grace period longer than SHUTDOWN_GRACE, and
 * its example environment names only variables the configuration schema defines.
 */
import fs from 'node:fs';
import path from 'node:path';
import { envSchema } from '@pos/shared/config-schema';
import { ROOT } from '../support/stack';

const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
const directive = (unit: string, name: string) =>
  [...unit.matchAll(new RegExp(`^${name}=(.*)$`, 'gm'))].map((match) => match[1]!);
const dockerfile = read('Dockerfile');

describe.each(['api', 'worker'])('the %s unit', (role) => {
  const unit = read(`deploy/systemd/pos-${role}.service`);

  it("runs the image's command with the image's Node settings", () => {
    const cmd = new RegExp(`FROM runtime AS ${role}[\\s\\S]*?CMD \\["node", "([^"]+)"\\]`).exec(dockerfile)![1];
    expect(directive(unit, 'ExecStart')).toEqual([`/usr/bin/node ${cmd}`]);
    const imageEnv = /^ENV (.*)$/m.exec(dockerfile)![1]!.split(' ').sort();
    expect(directive(unit, 'Environment')[0]!.split(' ').sort()).toEqual(imageEnv);
  });

  it('drains on SIGTERM within a stop timeout past SHUTDOWN_GRACE', () => {
    const env = read(`deploy/systemd/${role}.env.example`);
    const grace = Number(/^SHUTDOWN_GRACE=(\d+)s$/m.exec(env)![1]);
    expect(directive(unit, 'KillSignal')).toEqual(['SIGTERM']);
    expect(Number(directive(unit, 'TimeoutStopSec')[0])).toBeGreaterThanOrEqual(grace + 10);
    expect(directive(unit, 'User')).toEqual(['pos']);
  });

  it('names only variables of the configuration schema in its example environment', () => {
    const names = read(`deploy/systemd/${role}.env.example`)
      .split('\n')
      .filter((line) => /^[A-Z]/.test(line))
      .map((line) => line.split('=')[0]!);
    expect(names.length).toBeGreaterThan(3);
    expect(names.filter((name) => !(name in envSchema.properties))).toEqual([]);
  });
});
