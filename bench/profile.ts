/**
 * `npm run bench -- --profile`: reads the V8 CPU profiles the API and worker processes wrote at
 * exit (`--cpu-prof`) and ranks where their time went, by function and by package.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../scripts/embedded/spawn-role';
import { round } from './statistics';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface Share {
  name: string;
  /** Self time, ms, and its share of the process's busy (non-idle) time. */
  ms: number;
  percent: number;
}

export interface ProfileSummary {
  file: string;
  busyMs: number;
  topFunctions: Share[];
  topPackages: Share[];
}

/** The package a script belongs to: a dependency, one of ours, or Node's own. */
export function packageOf(url: string, functionName: string): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return 'node (built-in modules)';
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const [first, second] = url.slice(modules + '/node_modules/'.length).split('/');
    return first?.startsWith('@') ? `${first}/${second}` : (first ?? url);
  }
  const file = url.replace(/^file:\/\//, '');
  const local = path.relative(ROOT, file);
  if (local.startsWith('shared/')) return '@pos/shared';
  if (local.startsWith('services/api/')) return '@pos/api';
  if (local.startsWith('services/worker/')) return '@pos/worker';
  return local.startsWith('..') ? file : local;
}

function functionLabel(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  if (!url) return functionName || '(anonymous)';
  const file = url.replace(/^file:\/\//, '');
  const where = file.includes('/node_modules/') ? file.slice(file.lastIndexOf('/node_modules/') + 14) : path.relative(ROOT, file);
  return `${functionName || '(anonymous)'} ${where}:${lineNumber + 1}`;
}


function top(totals: Map<string, number>, busy: number, count: number): Share[] {
  return [...totals]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([name, us]) => ({ name, ms: round(us / 1000, 1), percent: round((us / busy) * 100, 1) }));
}

export function summariseProfile(file: string, count = 15): ProfileSummary {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const functions = new Map<string, number>();
  const packages = new Map<string, number>();
  let busy = 0;
  profile.samples.forEach((id, i) => {
    const node = byId.get(id);
    const us = profile.timeDeltas[i] ?? 0;
    if (!node || node.callFrame.functionName === '(idle)') return;
    busy += us;
    const fn = functionLabel(node);
    functions.set(fn, (functions.get(fn) ?? 0) + us);
    const pkg = packageOf(node.callFrame.url, node.callFrame.functionName);
    packages.set(pkg, (packages.get(pkg) ?? 0) + us);
  });
  return { file: path.basename(file), busyMs: round(busy / 1000, 1), topFunctions: top(functions, busy, count), topPackages: top(packages, busy, count) };
}

/** Every profile in the directory, summarised. */
export function summariseProfiles(dir: string): ProfileSummary[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((name) => name.endsWith('.cpuprofile'))
    .sort()
    .map((name) => summariseProfile(path.join(dir, name)));
}

export function renderProfile(p: ProfileSummary): string {
  const lines = [`**${p.file}** (${p.busyMs} ms busy; self time)`, '', '| package | ms | % |', '|---|---|---|'];
  for (const s of p.topPackages) lines.push(`| ${s.name} | ${s.ms} | ${s.percent} |`);
  lines.push('', '| function | ms | % |', '|---|---|---|');
  for (const s of p.topFunctions) lines.push(`| ${s.name} | ${s.ms} | ${s.percent} |`);
  return lines.join('\n');
}
