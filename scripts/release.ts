/**
 * `npm run release -- <version> [--date YYYY-MM-DD] [--dry-run]` (docs/upgrades.md#making-a-release):
 * in the checkout the command runs in, sets the version of every package of the workspace and of
 * the lockfile's entries for them, dates the changelog's [Unreleased] section as the release,
 * writes the Kubernetes manifests again (their images carry the version), commits, and makes the
 * annotated tag v<version>. Then, in a commit of its own, main says it is no release: the
 * changelog names the release's commit (`Commit: <sha>` in its section, so a clone finds it
 * without tags), deploy/previous-release names it for the next upgrade test, and every version
 * moves to the next minor's `-dev` (manifests included: no release's image names other code).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

const WORKSPACES = ['shared', 'services/api', 'services/worker', 'web/board'];
const KUBERNETES_GENERATOR = 'deploy/kubernetes/generate/main.mts';
const RELEASE = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$/;
const VERSION = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-dev)?$/;

type Manifest = { version: string; dependencies?: Record<string, string>; devDependencies?: Record<string, string> };

const git = (root: string, ...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();

/** Semantic order: by the three numbers, and a `-dev` version before its release. */
function compare(a: string, b: string): number {
  const [x, y] = [a, b].map((v) => VERSION.exec(v)!);
  for (let i = 1; i <= 3; i++) if (x![i] !== y![i]) return Number(x![i]) - Number(y![i]);
  return (x![4] ? 0 : 1) - (y![4] ? 0 : 1);
}

/** What main says it is after releasing `version`: the next minor, in development. */
const nextDev = (version: string): string => {
  const [major, minor] = version.split('.').map(Number);
  return `${major}.${minor! + 1}.0-dev`;
};

/** A manifest (or a lockfile entry) at `version`, with its dependencies on the workspace's packages too. */
function bumped<T extends Manifest>(manifest: T, version: string): T {
  const ours = (deps: Record<string, string> | undefined) =>
    deps &&
    Object.fromEntries(Object.entries(deps).map(([name, range]) => [name, name.startsWith('@pos/') ? version : range]));
  const dependencies = ours(manifest.dependencies);
  const devDependencies = ours(manifest.devDependencies);
  return { ...manifest, version, ...(dependencies && { dependencies }), ...(devDependencies && { devDependencies }) };
}

/** The changelog with its [Unreleased] section dated as `version`, and a new empty one above it. */
function datedChangelog(text: string, version: string, date: string): string {
  const heading = /^## \[Unreleased\][^\n]*\n/m;
  if (!heading.test(text)) throw new Error('CHANGELOG.md has no "## [Unreleased]" section');
  if (new RegExp(`^## \\[${version.replace(/\./g, '\\.')}\\]`, 'm').test(text))
    throw new Error(`CHANGELOG.md already has ${version}`);
  return text.replace(heading, `## [Unreleased]\n\n## [${version}] - ${date}\n`);
}

/** The changelog with `Commit: <sha>` as the first line of `version`'s section. */
function namedCommit(text: string, version: string, sha: string): string {
  const heading = new RegExp(`^## \\[${version.replace(/\./g, '\\.')}\\][^\n]*\n`, 'm');
  return text.replace(heading, (line) => `${line}\nCommit: \`${sha}\` (tag \`v${version}\`)\n`);
}

/** Every package, the lockfile's workspace entries and the manifests at `version`, staged. */
function setVersion(root: string, version: string, extra: Map<string, string> = new Map()): void {
  const read = (file: string) => fs.readFileSync(path.join(root, file), 'utf8');
  const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
  const writes = new Map<string, string>();
  for (const dir of ['.', ...WORKSPACES]) {
    const file = path.join(dir, 'package.json');
    writes.set(file, json(bumped(JSON.parse(read(file)) as Manifest, version)));
  }
  const lock = JSON.parse(read('package-lock.json')) as Manifest & { packages: Record<string, Manifest> };
  lock.version = version;
  for (const entry of ['', ...WORKSPACES]) lock.packages[entry] = bumped(lock.packages[entry]!, version);
  writes.set('package-lock.json', json(lock));
  for (const [file, text] of [...writes, ...extra]) fs.writeFileSync(path.join(root, file), text);
  git(root, 'add', ...writes.keys(), ...extra.keys());
  // the Kubernetes manifests name the images by the version: written again at it
  if (fs.existsSync(path.join(root, KUBERNETES_GENERATOR))) {
    execFileSync(process.execPath, ['--import', 'tsx', KUBERNETES_GENERATOR], { cwd: root, stdio: 'ignore' });
    git(root, 'add', 'deploy/kubernetes');
  }
}

function main(): void {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { date: { type: 'string' }, 'dry-run': { type: 'boolean' } },
  });
  const [version] = positionals;
  if (!version || !RELEASE.test(version))
    throw new Error('usage: npm run release -- <major.minor.patch> [--date YYYY-MM-DD] [--dry-run]');
  const date = values.date ?? new Date().toISOString().slice(0, 10);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) throw new Error('--date must be YYYY-MM-DD');
  const root = git(process.cwd(), 'rev-parse', '--show-toplevel');
  const read = (file: string) => fs.readFileSync(path.join(root, file), 'utf8');
  const current = (JSON.parse(read('package.json')) as Manifest).version;
  if (compare(version, current) <= 0) throw new Error(`${version} is not above the current version ${current}`);
  if (!values['dry-run'] && git(root, 'status', '--porcelain') !== '')
    throw new Error('the working tree has changes: commit or stash them first');
  const dev = nextDev(version);
  if (values['dry-run']) {
    process.stdout.write(
      `would release ${current} -> ${version} (${date}): commit, tag v${version}; then name its ` +
        `commit in CHANGELOG.md and deploy/previous-release, and move main to ${dev}\n`,
    );
    return;
  }

  setVersion(root, version, new Map([['CHANGELOG.md', datedChangelog(read('CHANGELOG.md'), version, date)]]));
  git(root, 'commit', '-q', '-m', `Release ${version}`);
  git(root, 'tag', '-a', `v${version}`, '-m', `Release ${version}`);
  const released = git(root, 'rev-parse', 'HEAD');

  setVersion(
    root,
    dev,
    new Map([
      ['CHANGELOG.md', namedCommit(read('CHANGELOG.md'), version, released)],
      [path.join('deploy', 'previous-release'), `${released}\n`],
    ]),
  );
  git(root, 'commit', '-q', '-m', `Main is ${dev}; upgrades are tested from v${version} (${released.slice(0, 7)}) on`);
  process.stdout.write(`released ${version} as v${version} (${released}); main is now ${dev}. Push main and the tag\n`);
}

try {
  main();
} catch (err) {
  process.stderr.write(`release: ${(err as Error).message}\n`);
  process.exit(1);
}
