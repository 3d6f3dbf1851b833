/**
 * `npm run kubernetes`: writes deploy/kubernetes/<shape>/*.yaml; with `--check` (npm run lint),
 * fails when the committed files differ from what the source makes.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { filesOf, render } from './manifests.mjs';
import { SHAPES } from './site.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));

const ROOT = path.join(HERE, '..');
const check = process.argv.includes('--check');
const stale: string[] = [];

for (const shape of SHAPES) {
  const dir = path.join(ROOT, shape.name);
  const files = filesOf(shape);
  if (!check) fs.mkdirSync(dir, { recursive: true });
  const existing = fs.existsSync(dir) ? fs.readdirSync(dir).filter((file) => file.endsWith('.yaml')) : [];
  for (const file of existing)
    if (!(file in files)) check ? stale.push(path.join(shape.name, file)) : fs.rmSync(path.join(dir, file));
  for (const [file, objects] of Object.entries(files)) {
    const text = render(objects);
    const target = path.join(dir, file);
    if (!check) fs.writeFileSync(target, text);
    else if (!fs.existsSync(target) || fs.readFileSync(target, 'utf8') !== text)
      stale.push(path.join(shape.name, file));
  }
}

if (stale.length > 0) {
  process.stderr.write(`kubernetes: out of date (run npm run kubernetes): ${stale.join(', ')}\n`);
  process.exit(1);
}
process.stdout.write(
  `kubernetes: ${SHAPES.map((shape) => shape.name).join(', ')} ${check ? 'up to date' : 'written'}\n`,
);
