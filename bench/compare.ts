/**
 * `npm run bench:quick`'s verdict: each figure of a run's summary that has a target (status
 * updates and polls against their floor, memory per stream), next to its target and to the same
 * figure in the committed bench/results/latest.json, flagged when it moved more than 10 % either
 * way. Own-process CPU is the API, the worker and Redis: MongoDB (the stand-in, in this bench)
 * stands beside it.
 */
import { unjudgedRss } from './streams';
import { type FloorComparison, type RequestCost, statusTargets, type Summary } from './summary';

/** A move past this share of the committed figure is flagged. */
export const MOVED = 0.1;

interface Row {
  figure: string;
  value: number;
  /** What the target allows, and which way. */
  target?: { limit: number; atMost: boolean };
  /** The reading cannot be judged (said instead of met). */
  unreliable?: string;
  committed?: number;
}

const round = (n: number) => Math.round(n * 100) / 100;
const ownMs = (cost: RequestCost) => cost.ownMs ?? cost.apiMs + cost.workerMs + cost.redisMs;
/** The service's own processes (API, worker, Redis) over the floor's. */
export const ownRatio = (row: FloorComparison) => (ownMs(row.floor) > 0 ? round(ownMs(row.service) / ownMs(row.floor)) : 0);

function rowsOf(summary: Summary): Map<string, Omit<Row, 'committed'>> {
  const rows = new Map<string, Omit<Row, 'committed'>>();
  const add = (row: Omit<Row, 'committed'>) => rows.set(row.figure, row);
  for (const s of summary.statusUpdate) {
    const targets = statusTargets(s.clients);
    add({ figure: `status update, ${s.clients} clients: own CPU / floor`, value: ownRatio(s), target: { limit: targets.ownCpu, atMost: true } });
    add({ figure: `status update, ${s.clients} clients: MongoDB CPU / floor`, value: s.ratio.mongoMs });
    add({ figure: `status update, ${s.clients} clients: req/s / floor`, value: s.ratio.rps, target: { limit: targets.rps, atMost: false } });
  }
  for (const p of summary.poll) add({ figure: `poll, ${p.records} orders, ${p.clients} clients: API CPU / floor`, value: p.ratio.apiMs, target: { limit: 1.2, atMost: true } });
  if (summary.streams) {
    // (by its count: the quick run's 2,000 streams, read after 10 s, are never held against a full run's)
    add({
      figure: `streams, one location, ${summary.streams.streams} streams: RSS KiB per stream`,
      value: summary.streams.rssPerStreamKiB,
      target: { limit: summary.streams.rssTargetKiB, atMost: true },
      unreliable: unjudgedRss(summary.streams),
    });
  }
  return rows;
}

/** The table: one line per figure with a target or a committed counterpart. */
export function renderComparison(run: Summary, committed: Summary | undefined): string {
  const before = committed ? rowsOf(committed) : new Map<string, Omit<Row, 'committed'>>();
  const lines = ['| figure | this run | target | met | committed | moved |', '|---|---|---|---|---|---|'];
  let flagged = 0;
  for (const row of rowsOf(run).values()) {
    const was = before.get(row.figure)?.value;
    const met = row.target ? (row.target.atMost ? row.value <= row.target.limit : row.value >= row.target.limit) : undefined;
    const moved = was !== undefined && was > 0 ? (row.value - was) / was : undefined;
    const flag = moved !== undefined && Math.abs(moved) > MOVED;
    if (flag) flagged += 1;
    lines.push(
      [
        row.figure,
        row.value,
        row.target ? `${row.target.atMost ? '≤' : '≥'} ${row.target.limit}` : '',
        row.unreliable ?? (met === undefined ? '' : met ? 'yes' : 'NO'),
        was ?? '–',
        moved === undefined ? '' : `${moved > 0 ? '+' : ''}${Math.round(moved * 100)} %${flag ? ' ⚑' : ''}`,
      ].join(' | ').replace(/^/, '| ').concat(' |'),
    );
  }
  lines.push('', `${flagged} figure(s) moved more than ${MOVED * 100} % from the committed latest.json${committed ? '' : ' (none committed: nothing to compare)'}.`);
  return lines.join('\n');
}
