/**
 * Which release and commit this process runs, for its first log line, `pos_build_info`, the
 * liveness answer and the OpenAPI document: the version every package of the workspace carries
 * (one version, set by `npm run release`), and the commit from POS_COMMIT (the images' build
 * argument) or, in a checkout, from git; `unknown` elsewhere.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

export interface BuildInfo {
  version: string;
  commit: string;
}

let known: BuildInfo | undefined;

export function buildInfo(): BuildInfo {
  known ??= { version: packageVersion(), commit: process.env.POS_COMMIT || gitCommit() || 'unknown' };
  return known;
}

/** This package's version (its package.json sits beside src/ and dist/ alike). */
function packageVersion(): string {
  return (JSON.parse(readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')) as { version: string }).version;
}

/** The checkout's commit, when this runs from one (once, at start). */
function gitCommit(): string | undefined {
  try {
    return (
      execFileSync('git', ['rev-parse', 'HEAD'], {
        cwd: __dirname,
        stdio: ['ignore', 'pipe', 'ignore'],
        timeout: 2_000,
      })
        .toString()
        .trim() || undefined
    );
  } catch {
    return undefined;
  }
}
