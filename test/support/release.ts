/**
 * The release before this one (deploy/previous-release names its commit), exported from this
 * repository's history with `git archive` and set up with its own scripts, as a platform team
 * would install it: once per machine, in a folder of its own (its sources, its node_modules).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runToEnd } from './process-groups';
import { ROOT } from './stack';

/** The previous release's commit. */
export function previousRelease(): string {
  return fs.readFileSync(path.join(ROOT, 'deploy', 'previous-release'), 'utf8').trim();
}

/** The folder the release `commit` is set up in (set up now when it is not yet). */
export async function releaseAt(commit: string): Promise<string> {
  const dir = path.join(os.tmpdir(), `pos-release-${commit}`);
  const ready = path.join(dir, '.set-up');
  if (fs.existsSync(ready)) return dir;
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const archive = execFileSync('git', ['archive', '--format=tar', commit], { cwd: ROOT, maxBuffer: 512 * 1024 * 1024 });
  execFileSync('tar', ['-x', '-C', dir], { input: archive });
  const setup = await runToEnd('bash', ['scripts/setup.sh'], { cwd: dir, timeoutMs: 10 * 60_000 });
  if (setup.code !== 0)
    throw new Error(
      `the release ${commit} did not set up (exit ${setup.code}):\n${setup.out.slice(-2000)}\n${setup.err.slice(-4000)}`,
    );
  fs.writeFileSync(ready, new Date().toISOString());
  return dir;
}
