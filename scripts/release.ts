/**
 * `npm run release -- <version> [--date YYYY-MM-DD] [--dry-run]` (docs/upgrades.md#making-a-release):
 * in the checkout the command runs in, sets the version of every package of the workspace and of
 * the lockfile's entries for them, dates the changelog's [Unreleased] section as the release,
 * writes the Kubernetes manifests again (their images carry the version), commits, makes the
 * annotated tag v<version>, then names the release in deploy/previous-release (the next release's
 * upgrade test rolls from it) in a commit of its own.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

const WORKSPACES = ['shared', 'services/api', 'services/worker', 'web/board'];
const KUBERNETES_GENERATOR = 'deploy/kubernetes/generate/main.mts';
const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$/;

type Manifest = { version: string; dependencies?: Record<string, string>; devDependencies?: Record<string, string> };

const git = (root: string, ...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();

function compare(a: string, b: string): number {
  const [x, y] = [a, b].map((v) => SEMVER.exec(v)!.slice(1).map(Number));
  for (let i = 0; i < 3; i++) if (x![i] !== y![i]) return x![i]! - y![i]!;
  return 0;
}

/** A manifest (or a lockfile entry) at `version`, with its dependencies on the workspace's packages too. */
function bumped<T extends Manifest>(manifest: T, version: string): T {
  const ours = (deps: Record<string, string> | undefined) => deps && Object.fromEntries(Object.entries(deps).map(([name, range]) => [name, name.startsWith('@pos/') ? version : range]));
  const dependencies = ours(manifest.dependencies);
  const devDependencies = ours(manifest.devDependencies);
  return { ...manifest, version, ...(dependencies && { dependencies }), ...(devDependencies && { devDependencies }) };
}

/** The changelog with its [Unreleased] section dated as `version`, and a new empty one above it. */
function datedChangelog(text: string, version: string, date: string): string {
  const heading = /^## \[Unreleased\][^\n]*\n/m;
  if (!heading.test(text)) throw new Error('CHANGELOG.md has no "## [Unreleased]" section');
  if (new RegExp(`^## \\[${version.replace(/\./g, '\\.')}\\]`, 'm').test(text)) throw new Error(`CHANGELOG.md already has ${version}`);
  return text.replace(heading, `## [Unreleased]\n\n## [${version}] - ${date}\n`);
}

function main(): void {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { date: { type: 'string' }, 'dry-run': { type: 'boolean' } } });
  const [version] = positionals;
  if (!version || !SEMVER.test(version)) throw new Error('usage: npm run release -- <major.minor.patch> [--date YYYY-MM-DD] [--dry-run]');
  const date = values.date ?? new Date().toISOString().slice(0, 10);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) throw new Error('--date must be YYYY-MM-DD');
  const root = git(process.cwd(), 'rev-parse', '--show-toplevel');
  const read = (file: string) => fs.readFileSync(path.join(root, file), 'utf8');
  const current = (JSON.parse(read('package.json')) as Manifest).version;
  if (compare(version, current) <= 0) throw new Error(`${version} is not above the current version ${current}`);
  if (!values['dry-run'] && git(root, 'status', '--porcelain') !== '') throw new Error('the working tree has changes: commit or stash them first');

  const writes = new Map<string, string>();
  const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
  for (const dir of ['.', ...WORKSPACES]) {
    const file = path.join(dir, 'package.json');
    writes.set(file, json(bumped(JSON.parse(read(file)) as Manifest, version)));
  }
  const lock = JSON.parse(read('package-lock.json')) as Manifest & { packages: Record<string, Manifest> };
  lock.version = version;
  for (const entry of ['', ...WORKSPACES]) lock.packages[entry] = bumped(lock.packages[entry]!, version);
  writes.set('package-lock.json', json(lock));
  writes.set('CHANGELOG.md', datedChangelog(read('CHANGELOG.md'), version, date));

  if (values['dry-run']) {
    process.stdout.write(`would release ${current} -> ${version} (${date}): ${[...writes.keys()].join(', ')}; commit, tag v${version}, deploy/previous-release\n`);
    return;
  }
  for (const [file, text] of writes) fs.writeFileSync(path.join(root, file), text);
  git(root, 'add', ...writes.keys());
  // the Kubernetes manifests pin the release's images by its version: written again at it
  if (fs.existsSync(path.join(root, KUBERNETES_GENERATOR))) {
    execFileSync(process.execPath, ['--import', 'tsx', KUBERNETES_GENERATOR], { cwd: root, stdio: 'ignore' });
    git(root, 'add', 'deploy/kubernetes');
  }
  git(root, 'commit', '-q', '-m', `Release ${version}`);
  git(root, 'tag', '-a', `v${version}`, '-m', `Release ${version}`);
  const released = git(root, 'rev-parse', 'HEAD');
  fs.writeFileSync(path.join(root, 'deploy', 'previous-release'), `${released}\n`);
  git(root, 'add', 'deploy/previous-release');
  git(root, 'commit', '-q', '-m', `Upgrades are tested from v${version} (${released.slice(0, 7)}) on`);
  process.stdout.write(`released ${version} as v${version} (${released}); push main and the tag\n`);
}

try {
  main();
} catch (err) {
  process.stderr.write(`release: ${(err as Error).message}\n`);
  process.exit(1);
}
