/**
 * `npm run docs`: writes every generated doc (see generators.ts) from its sources.
 */
import fs from 'node:fs';
import path from 'node:path';
import { docGenerators } from './generators';

const ROOT = path.resolve(__dirname, '../..');

for (const { doc, render } of docGenerators()) {
  const file = path.join(ROOT, doc);
  const before = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : undefined;
  const text = render(before);
  if (before === text) {
    process.stdout.write(`docs: ${doc} is up to date\n`);
    continue;
  }
  fs.writeFileSync(file, text);
  process.stdout.write(`docs: wrote ${doc}\n`);
}
