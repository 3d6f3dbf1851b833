/**
 * docs/architecture.md says where each concept lives and how a request travels: the tour's files
 * exist, each named once, each exports the symbol the tour starts at, and the parts a row names
 * exist beside it; the names of "How a request travels" are those the code uses, on the side of
 * each arrow the page puts them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { locationChannel } from '@pos/shared/events/announcements';
import { replyChannel, TRANSITION_QUEUE } from '@pos/shared/queue/jobs';
import { APPLIED_JOBS_KEPT } from '@pos/shared/store/orders';
import { AnsweredJobs } from '@pos/worker/transitions/answered-jobs';
import { ROOT } from '../../scripts/embedded/spawn-role';

const page = fs.readFileSync(path.join(ROOT, 'docs/architecture.md'), 'utf8');
const section = (from: string, to: string) => page.slice(page.indexOf(from), page.indexOf(to));
const source = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
const exportsSymbol = (file: string, symbol: string) =>
  new RegExp(
    `^export (?:declare )?(?:async )?(?:function|class|const|let|interface|type|enum|abstract class) ${symbol}\\b`,
    'm',
  ).test(source(file));

describe("the architecture tour's rows", () => {
  const rows = [...section('## A tour', '## The folders').matchAll(/^\| (.+) \| `([^`]+)` \| `([^`]+)` \|$/gm)].map(
    ([, concept, file, symbol]) => ({ concept: concept!, file: file!, symbol: symbol! }),
  );

  it('name files that exist, each once', () => {
    expect(rows.length).toBeGreaterThan(50);
    expect(rows.filter(({ file }) => !fs.existsSync(path.join(ROOT, file))).map(({ file }) => file)).toEqual([]);
    expect(new Set(rows.map(({ file }) => file)).size).toBe(rows.length);
  });

  it('start at a symbol their file exports', () => {
    expect(
      rows.filter(({ file, symbol }) => !exportsSymbol(file, symbol)).map(({ file, symbol }) => `${file}: ${symbol}`),
    ).toEqual([]);
  });

  it('name parts (folders, modules) that exist beside their file', () => {
    const parts = rows.flatMap(({ concept, file }) =>
      [...concept.matchAll(/`([a-z][a-z-]*\/?)`/g)]
        .map(([, part]) => ({ file, part: part! }))
        .filter(({ part }) => part.endsWith('/') || part.includes('-')),
    );
    expect(parts.length).toBeGreaterThan(4);
    const missing = parts.filter(({ file, part }) => {
      const beside = path.join(ROOT, path.dirname(file), part);
      return !(part.endsWith('/') ? fs.existsSync(beside) : fs.existsSync(`${beside}.ts`));
    });
    expect(missing).toEqual([]);
  });
});

describe('how a request travels', () => {
  const travels = section('## How a request travels', '## Exactly once');

  it('names the queue, channels, keys and numbers the code uses', () => {
    expect(travels).toContain(`BullMQ queue \`${TRANSITION_QUEUE}\``);
    expect(travels).toContain(`(\`${replyChannel('<prefix>', '<nodeId>')}\`)`);
    expect(travels).toContain(`(\`${locationChannel('<prefix>', '<locationId>')}\``);
    expect(travels).toContain(
      `(\`${new AnsweredJobs('<prefix>', 1).record('<jobId>', { status: 200, body: {} })[0]}\``,
    );
    expect(travels).toContain(`(the last ${APPLIED_JOBS_KEPT},`);
  });

  // Each arrow of the drawing, by the module on each side that makes it.
  const arrows: [string, string, RegExp][] = [
    ['register ──HTTP──> API nodes (Koa)', 'services/api/src/app.ts', /from 'koa'/],
    ['API ──BullMQ──> workers: the API adds the job', 'services/api/src/jobs/job-client.ts', /\.queue\.add\(/],
    [
      'API ──BullMQ──> workers: the worker takes it',
      'services/worker/src/transitions/consumers.ts',
      /new Worker<[^>]+>\(\s*TRANSITION_QUEUE/,
    ],
    ['workers ──> MongoDB, version-guarded', 'services/worker/src/transitions/order-action.ts', /ctx\.writer\.write\(/],
    [
      "the reply on the node's own channel: the API listens",
      'services/api/src/server.ts',
      /replyChannel\(config\.redis\.prefix, nodeId\)/,
    ],
    [
      "the reply on the node's own channel: the worker answers there",
      'services/worker/src/transitions/processor.ts',
      /isReplyChannel\(this\.deps\.prefix, replyTo\)/,
    ],
    [
      'SSE <── Redis pub/sub per location: the worker announces',
      'shared/src/events/announcements.ts',
      /publish\(locationChannel\(this\.prefix, locationId\)/,
    ],
    [
      'SSE <── Redis pub/sub per location: the node subscribes for its streams',
      'services/api/src/stream/hub.ts',
      /locationChannel\(this\.options\.prefix, locationId\)/,
    ],
  ];

  it('draws arrows the code makes', () => {
    expect(travels).toContain('register ──HTTP──> API nodes (Koa) ──BullMQ──> workers ──> MongoDB');
    expect(travels).toContain('SSE <── Redis pub/sub per location');
    expect(arrows.filter(([, file, made]) => !made.test(source(file))).map(([arrow]) => arrow)).toEqual([]);
  });
});
