/**
 * The bench's history: one line per full run in bench/results/history.jsonl, with the headline
 * ratios (service / floor, as the run's summary has them) and stream memory, so that a trend or a
 * regression can be found without keeping every run's full results (latest.json is the last).
 */
import fs from 'node:fs';
import type { BenchResults } from './results';

export const HISTORY_FILE = 'history.jsonl';

export interface HistoryLine {
  startedAt: string;
  /** The commit measured (12 characters), `+` when the tree held changes beyond it. */
  commit?: string;
  /** Status updates per concurrency: total CPU, own processes' CPU (API + worker + Redis), API CPU, worker CPU and throughput, each as service / floor. */
  statusUpdate?: { clients: number; total: number; own?: number; api: number; worker: number; rps: number }[];
  /** Polls per records and concurrency: API CPU, service / floor. */
  poll?: { records: number; clients: number; api: number }[];
  /** RSS per stream (KiB): the 10,000 streams on one location, in a chain's shape, and at the fan-out level. */
  streamKiB?: number;
  chainStreamKiB?: number;
  fanOutStreamKiB?: number;
}

export function historyLine(results: BenchResults): HistoryLine {
  const { summary } = results;
  const line: HistoryLine = { startedAt: results.startedAt };
  if (results.commit) line.commit = `${results.commit.sha.slice(0, 12)}${results.commit.dirty ? '+' : ''}`;
  // (summaries of the earliest runs had another shape: their lines carry what they can)
  if (Array.isArray(summary?.statusUpdate) && summary.statusUpdate[0]?.ratio) {
    line.statusUpdate = summary.statusUpdate.map(({ clients, ratio }) => ({
      clients,
      total: ratio.totalMs,
      ...(ratio.ownMs === undefined ? {} : { own: ratio.ownMs }),
      api: ratio.apiMs,
      worker: ratio.workerMs,
      rps: ratio.rps,
    }));
  }
  if (Array.isArray(summary?.poll) && summary.poll[0]?.ratio) {
    line.poll = summary.poll.map(({ records, clients, ratio }) => ({ records, clients, api: ratio.apiMs }));
  }
  if (summary?.streams) line.streamKiB = summary.streams.rssPerStreamKiB;
  if (summary?.chainStreams) line.chainStreamKiB = summary.chainStreams.rssPerStreamKiB;
  if (results.streamMemory) line.fanOutStreamKiB = results.streamMemory.rssPerStreamKiB;
  return line;
}

/** Appends the run's line to the history in `dir`. */
export function appendHistory(dir: string, results: BenchResults): void {
  fs.appendFileSync(`${dir}/${HISTORY_FILE}`, `${JSON.stringify(historyLine(results))}\n`);
}

/** The history in `dir`, oldest first (empty when there is none). */
export function readHistory(dir: string): HistoryLine[] {
  const file = `${dir}/${HISTORY_FILE}`;
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((text) => text.trim() !== '')
    .map((text) => JSON.parse(text) as HistoryLine);
}
