import { fork } from 'node:child_process';
import v8 from 'node:v8';
import { AdminClient } from '@pos/shared/clients/admin-client';
import { loadConfig } from '@pos/shared/config';
import { createLogger } from '@pos/shared/log';
import { startApi } from '@pos/api/server';
import { startJongodb } from '../scripts/embedded/jongodb';
import { startRedisServer } from '../scripts/embedded/redis-server';

function summarize(): Map<string, number> {
  const snap = JSON.parse(readSnapshot());
  const f = snap.snapshot.meta.node_fields as string[];
  const types = snap.snapshot.meta.node_types[0] as string[];
  const n = f.length;
  const nodes = snap.nodes as number[];
  const strings = snap.strings as string[];
  const out = new Map<string, number>();
  for (let i = 0; i < nodes.length; i += n) {
    const type = types[nodes[i + f.indexOf('type')]!]!;
    const name = type === 'object' || type === 'closure' || type === 'native' ? strings[nodes[i + f.indexOf('name')]!]! : type;
    const size = nodes[i + f.indexOf('self_size')]!;
    const key = type === 'array' ? `array:${strings[nodes[i + f.indexOf('name')]!]!.slice(0, 40)}:${size >= 4096 ? 'big' : size >= 512 ? 'mid' : 'small'}` : `${type}:${name.slice(0, 60)}`;
    out.set(key, (out.get(key) ?? 0) + size);
    out.set('#' + key, (out.get('#' + key) ?? 0) + 1);
  }
  return out;
}
function readSnapshot(): string {
  const chunks: Buffer[] = [];
  const s = v8.getHeapSnapshot();
  let c; while ((c = s.read()) !== null) chunks.push(c);
  return Buffer.concat(chunks).toString();
}
(async () => {
  const redis = await startRedisServer();
  const mongo = await startJongodb();
  const env = { MONGO_URL: mongo.url, REDIS_URL: redis.url, ADMIN_TOKEN: 'x'.repeat(40), PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', SSE_MAX_STREAMS_PER_SESSION: '10000' };
  const api = await startApi(loadConfig(env), createLogger('silent', 'x'));
  const admin = new AdminClient(`http://127.0.0.1:${api.port}`, env.ADMIN_TOKEN);
  const loc = await admin.createLocation('m');
  const key = (await admin.createServiceSession(loc.id, 'd')).apiKey;
  const client = fork('/tmp/memx/client2.js');
  const ask = (m: object) => new Promise((r) => { client.once('message', r); client.send(m); });
  await ask({ port: api.port, count: 200, key });
  (global as any).gc(); (global as any).gc();
  const a = summarize(); const ha = process.memoryUsage();
  await ask({ port: api.port, count: 2000, key });
  (global as any).gc(); (global as any).gc();
  const b = summarize(); const hb = process.memoryUsage();
  console.log('heap per stream KiB', ((hb.heapUsed - ha.heapUsed) / 2000 / 1024).toFixed(2), 'rss', ((hb.rss - ha.rss) / 2000 / 1024).toFixed(2));
  const d = [...b].map(([k, v]) => [k, v - (a.get(k) ?? 0)] as const).sort((x, y) => y[1] - x[1]).slice(0, 60);
  for (const [k, v] of d) console.log((v / 2000).toFixed(0).padStart(6), k);
  client.kill(); await api.close(); await redis.stop(); await mongo.stop(); process.exit(0);
})();
