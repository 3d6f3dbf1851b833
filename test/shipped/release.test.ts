/**
 * `npm run release` (scripts/release.ts), on a copy of this checkout's manifests, lockfile and
 * changelog in a scratch git repository: every package and the lockfile's workspace entries at the
 * new version, the changelog's [Unreleased] dated, an annotated tag, and the next release's upgrade
 * test pointed at it; a version not above the current one, or a dirty tree, is refused.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runToEnd } from '../support/process-groups';
import { ROOT } from '../support/stack';

const FILES = ['package.json', 'package-lock.json', 'CHANGELOG.md', 'deploy/previous-release', ...['shared', 'services/api', 'services/worker', 'web/board'].map((dir) => `${dir}/package.json`)];

describe('npm run release', () => {
  let repo: string;
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, encoding: 'utf8' }).trim();
  const release = (...args: string[]) => runToEnd(process.execPath, ['--require', require.resolve('tsx/cjs'), path.join(ROOT, 'scripts', 'release.ts'), ...args], { cwd: repo });
  const read = (file: string) => fs.readFileSync(path.join(repo, file), 'utf8');

  beforeEach(() => {
    repo = fs.mkdtempSync(path.join(os.tmpdir(), 'release-'));
    for (const file of FILES) {
      fs.mkdirSync(path.dirname(path.join(repo, file)), { recursive: true });
      fs.copyFileSync(path.join(ROOT, file), path.join(repo, file));
    }
    git('init', '-q');
    git('-c', 'user.name=t', '-c', 'user.email=t@example.com', 'add', '.');
    git('-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'start');
    git('config', 'user.name', 'Release test');
    git('config', 'user.email', 'release@example.com');
  });
  afterEach(() => fs.rmSync(repo, { recursive: true, force: true }));

  it('bumps every package and the lockfile, dates the changelog, tags, and names the release for the next upgrade test', async () => {
    const current = (JSON.parse(read('package.json')) as { version: string }).version;
    const [major, minor] = current.split('.').map(Number);
    const next = `${major}.${minor! + 1}.0`;
    const run = await release(next, '--date', '2027-01-15');
    expect(run).toMatchObject({ code: 0, err: '' });
    for (const file of FILES.filter((f) => f.endsWith('package.json'))) {
      const manifest = JSON.parse(read(file)) as { version: string; dependencies?: Record<string, string>; devDependencies?: Record<string, string> };
      expect(`${file} ${manifest.version}`).toBe(`${file} ${next}`);
      for (const [name, range] of Object.entries({ ...manifest.dependencies, ...manifest.devDependencies })) if (name.startsWith('@pos/')) expect(`${file} ${name} ${range}`).toBe(`${file} ${name} ${next}`);
    }
    const lock = JSON.parse(read('package-lock.json')) as { version: string; packages: Record<string, { version: string }> };
    expect([lock.version, ...['', 'shared', 'services/api', 'services/worker', 'web/board'].map((entry) => lock.packages[entry]!.version)]).toEqual(Array(6).fill(next));
    // nothing else of the lockfile moved
    const before = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, unknown> };
    expect(Object.keys(lock.packages)).toEqual(Object.keys(before.packages));
    expect(read('CHANGELOG.md')).toMatch(new RegExp(`^## \\[Unreleased\\]\\n\\n## \\[${next.replace(/\./g, '\\.')}\\] - 2027-01-15\\n`, 'm'));
    expect(git('cat-file', '-t', `v${next}`)).toBe('tag');
    const tagged = git('rev-list', '-n', '1', `v${next}`);
    expect(git('log', '-1', '--format=%s', tagged)).toBe(`Release ${next}`);
    expect(read('deploy/previous-release').trim()).toBe(tagged);
    expect(git('status', '--porcelain')).toBe('');
  });

  it('refuses a version not above the current one, and a working tree with changes', async () => {
    const current = (JSON.parse(read('package.json')) as { version: string }).version;
    expect(await release(current)).toMatchObject({ code: 1, err: `release: ${current} is not above the current version ${current}\n` });
    fs.appendFileSync(path.join(repo, 'CHANGELOG.md'), '\nsomething\n');
    expect(await release('99.0.0')).toMatchObject({ code: 1, err: 'release: the working tree has changes: commit or stash them first\n' });
    expect(git('tag')).toBe('');
  });
});
