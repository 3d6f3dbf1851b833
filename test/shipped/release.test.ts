/**
 * `npm run release` (scripts/release.ts), on a copy of this checkout's manifests, lockfile and
 * changelog in a scratch git repository: every package and the lockfile's workspace entries at the
 * new version, the changelog's [Unreleased] dated, an annotated tag; then the changelog names the
 * release's commit, the next release's upgrade test is pointed at it, and main moves to the next
 * `-dev` version. A version not above the current one, or a dirty tree, is refused. And in this
 * repository, each release CHANGELOG.md names is a commit that carries that version.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runToEnd } from '../support/process-groups';
import { ROOT } from '../support/stack';

const FILES = [
  'package.json',
  'package-lock.json',
  'CHANGELOG.md',
  'deploy/previous-release',
  ...['shared', 'services/api', 'services/worker', 'web/board'].map((dir) => `${dir}/package.json`),
];

describe('npm run release', () => {
  let repo: string;
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, encoding: 'utf8' }).trim();
  const release = (...args: string[]) =>
    runToEnd(
      process.execPath,
      ['--require', require.resolve('tsx/cjs'), path.join(ROOT, 'scripts', 'release.ts'), ...args],
      { cwd: repo },
    );
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

  const manifests = () =>
    FILES.filter((f) => f.endsWith('package.json')).map(
      (file) =>
        [
          file,
          JSON.parse(read(file)) as {
            version: string;
            dependencies?: Record<string, string>;
            devDependencies?: Record<string, string>;
          },
        ] as const,
    );
  const lockVersions = () => {
    const lock = JSON.parse(read('package-lock.json')) as {
      version: string;
      packages: Record<string, { version: string }>;
    };
    return [
      lock.version,
      ...['', 'shared', 'services/api', 'services/worker', 'web/board'].map((entry) => lock.packages[entry]!.version),
    ];
  };

  it('releases at the version, tagged; then names its commit in the changelog and for the next upgrade test, and moves main to the next -dev', async () => {
    const current = (JSON.parse(read('package.json')) as { version: string }).version;
    const [major, minor] = current.split('.').map(Number);
    const next = current.endsWith('-dev') ? current.replace(/-dev$/, '') : `${major}.${minor! + 1}.0`;
    const dev = `${next.split('.')[0]}.${Number(next.split('.')[1]) + 1}.0-dev`;
    const run = await release(next, '--date', '2027-01-15');
    expect(run).toMatchObject({ code: 0, err: '' });

    const tagged = git('rev-list', '-n', '1', `v${next}`);
    expect(git('cat-file', '-t', `v${next}`)).toBe('tag');
    expect(git('log', '-1', '--format=%s', tagged)).toBe(`Release ${next}`);
    expect(git('rev-parse', 'HEAD~1')).toBe(tagged);
    // the release commit: every package at the version, the changelog dated
    for (const file of FILES.filter((f) => f.endsWith('package.json'))) {
      const manifest = JSON.parse(git('show', `${tagged}:${file}`)) as {
        version: string;
        dependencies?: Record<string, string>;
      };
      expect(`${file} ${manifest.version}`).toBe(`${file} ${next}`);
    }
    expect(git('show', `${tagged}:CHANGELOG.md`)).toMatch(
      new RegExp(`^## \\[Unreleased\\]\\n\\n## \\[${next.replace(/\./g, '\\.')}\\] - 2027-01-15\\n`, 'm'),
    );

    // main after it: the next -dev everywhere, the release named by its commit
    for (const [file, manifest] of manifests()) {
      expect(`${file} ${manifest.version}`).toBe(`${file} ${dev}`);
      for (const [name, range] of Object.entries({ ...manifest.dependencies, ...manifest.devDependencies }))
        if (name.startsWith('@pos/')) expect(`${file} ${name} ${range}`).toBe(`${file} ${name} ${dev}`);
    }
    expect(lockVersions()).toEqual(Array(6).fill(dev));
    // nothing else of the lockfile moved
    const before = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as {
      packages: Record<string, unknown>;
    };
    expect(
      Object.keys((JSON.parse(read('package-lock.json')) as { packages: Record<string, unknown> }).packages),
    ).toEqual(Object.keys(before.packages));
    expect(read('CHANGELOG.md')).toContain(`## [${next}] - 2027-01-15\n\nCommit: \`${tagged}\` (tag \`v${next}\`)\n`);
    expect(read('deploy/previous-release').trim()).toBe(tagged);
    expect(git('status', '--porcelain')).toBe('');
  });

  it('refuses a version not above the current one, and a working tree with changes', async () => {
    const current = (JSON.parse(read('package.json')) as { version: string }).version;
    expect(await release('0.0.1')).toMatchObject({
      code: 1,
      err: `release: 0.0.1 is not above the current version ${current}\n`,
    });
    expect(await release(`${current}-rc`)).toMatchObject({
      code: 1,
      err: 'release: usage: npm run release -- <major.minor.patch> [--date YYYY-MM-DD] [--dry-run]\n',
    });
    fs.appendFileSync(path.join(repo, 'CHANGELOG.md'), '\nsomething\n');
    expect(await release('99.0.0')).toMatchObject({
      code: 1,
      err: 'release: the working tree has changes: commit or stash them first\n',
    });
    expect(git('tag')).toBe('');
  });
});

describe('the releases CHANGELOG.md names', () => {
  it('each names its commit, and that commit carries the version (a clone finds every release without tags)', () => {
    const changelog = fs.readFileSync(path.join(ROOT, 'CHANGELOG.md'), 'utf8');
    const sections = [...changelog.matchAll(/^## \[(\d+\.\d+\.\d+)\][^\n]*\n([\s\S]*?)(?=^## |(?![\s\S]))/gm)];
    expect(sections.length).toBeGreaterThan(0);
    for (const [, version, body] of sections) {
      const commit = /^Commit: `([0-9a-f]{40})`/m.exec(body!)?.[1];
      expect(`${version}: ${commit ?? 'no Commit line'}`).toMatch(
        new RegExp(`^${version!.replace(/\./g, '\\.')}: [0-9a-f]{40}$`),
      );
      const manifest = JSON.parse(
        execFileSync('git', ['show', `${commit}:package.json`], { cwd: ROOT, encoding: 'utf8' }),
      ) as { version: string };
      expect(`${commit} ${manifest.version}`).toBe(`${commit} ${version}`);
    }
  });
});
