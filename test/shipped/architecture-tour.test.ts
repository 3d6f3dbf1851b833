/** docs/architecture.md's tour names one file per concept: each file it names exists, and is named once. */
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../../scripts/embedded/spawn-role';

describe("the architecture tour's files", () => {
  const page = fs.readFileSync(path.join(ROOT, 'docs/architecture.md'), 'utf8');
  const tour = page.slice(page.indexOf('## A tour'), page.indexOf('## The folders'));
  const files = [...tour.matchAll(/^\|[^|]+\| `([^`]+)` \|$/gm)].map((match) => match[1]!);

  it('exist, each named once', () => {
    expect(files.length).toBeGreaterThan(40);
    expect(files.filter((file) => !fs.existsSync(path.join(ROOT, file)))).toEqual([]);
    expect(new Set(files).size).toBe(files.length);
  });
});
