/**
 * Register presence in Redis (docs/presence-and-deadlines.md): what each API node saw of each
 * register (SERVICE) session, written behind, and the one reading of it that the admin API and
 * the worker's sweep share.
 *
 * A location's presence is one hash with a field per session and node, so that nodes never
 * overwrite each other (a session may hold streams on two nodes) and a node that dies leaves
 * fields that simply go stale. A node rewrites its fields for held streams every quarter of the
 * window; a field not rewritten within the window no longer counts its streams. The hash expires
 * two windows after its last write. Beside it, one sorted set of the locations seen (by when),
 * which the sweep reads to learn which locations to look at.
 */
import type { PresenceRegister } from '../schemas/responses';
import { isCluster, type RedisClient } from '../redis';

export const presenceKey = (prefix: string, locationId: string): string => `${prefix}:presence:loc:${locationId}`;
export const presenceSeenKey = (prefix: string): string => `${prefix}:presence:seen`;

/** One node's sighting of one session, as its hash field holds it. */
export interface Sighting {
  sessionId: string;
  deviceId: string;
  /** Epoch ms of its last request, or of the last rewrite while it holds streams. */
  lastSeenAt: number;
  /** Streams it holds on that node. */
  streams: number;
}

interface StoredSighting {
  /** deviceId */
  d: string;
  /** lastSeenAt */
  l: number;
  /** streams */
  s: number;
}

const fieldOf = (sessionId: string, nodeId: string): string => `${sessionId}/${nodeId}`;

/**
 * Writes a node's sightings, by location: each location's hash fields and the hash's expiry, and
 * the locations' places in the seen set. One round trip on one Redis, however many locations; on
 * a cluster the keys live on different shards, so each location's hash goes as a transaction of
 * its own beside one ZADD of them all.
 */
export async function writeSightings(redis: RedisClient, prefix: string, nodeId: string, byLocation: Map<string, Sighting[]>, windowMs: number): Promise<void> {
  const hashes: { key: string; fields: Record<string, string> }[] = [];
  const seen: (number | string)[] = [];
  for (const [locationId, sightings] of byLocation) {
    if (sightings.length === 0) continue;
    const fields: Record<string, string> = {};
    let latest = 0;
    for (const sighting of sightings) {
      const stored: StoredSighting = { d: sighting.deviceId, l: sighting.lastSeenAt, s: sighting.streams };
      fields[fieldOf(sighting.sessionId, nodeId)] = JSON.stringify(stored);
      latest = Math.max(latest, sighting.lastSeenAt);
    }
    hashes.push({ key: presenceKey(prefix, locationId), fields });
    seen.push(latest, locationId);
  }
  if (hashes.length === 0) return;
  if (isCluster(redis)) {
    await Promise.all([
      ...hashes.map(({ key, fields }) => redis.multi().hset(key, fields).pexpire(key, 2 * windowMs).exec()),
      redis.zadd(presenceSeenKey(prefix), ...seen),
    ]);
    return;
  }
  const pipeline = redis.pipeline();
  for (const { key, fields } of hashes) pipeline.hset(key, fields).pexpire(key, 2 * windowMs);
  const results = await pipeline.zadd(presenceSeenKey(prefix), ...seen).exec();
  for (const [err] of results ?? []) if (err) throw err;
}

export interface Presence {
  online: boolean;
  /** Sessions seen within the window, by session id, their nodes' sightings merged. */
  registers: PresenceRegister[];
}

/**
 * A location's presence at `now`: the sessions seen within the window (a field older than that
 * counts for nothing, streams included: its node stopped rewriting it), each with its streams
 * summed over the nodes. Online when any is. Fields gone stale are removed on the way (HDEL).
 */
export async function readPresence(redis: RedisClient, prefix: string, locationId: string, windowMs: number, now: number): Promise<Presence> {
  const key = presenceKey(prefix, locationId);
  const hash = await redis.hgetall(key);
  const bySession = new Map<string, { deviceId: string; lastSeenAt: number; streams: number }>();
  const stale: string[] = [];
  for (const [field, value] of Object.entries(hash)) {
    const sessionId = field.slice(0, field.lastIndexOf('/'));
    let stored: StoredSighting;
    try {
      stored = JSON.parse(value) as StoredSighting;
    } catch {
      stale.push(field);
      continue;
    }
    if (typeof stored.l !== 'number' || stored.l <= now - windowMs) {
      stale.push(field);
      continue;
    }
    const seen = bySession.get(sessionId);
    if (!seen) bySession.set(sessionId, { deviceId: String(stored.d), lastSeenAt: stored.l, streams: Number(stored.s) || 0 });
    else {
      seen.lastSeenAt = Math.max(seen.lastSeenAt, stored.l);
      seen.streams += Number(stored.s) || 0;
    }
  }
  // (a field is stale two windows after its node stopped writing it at the latest: the hash expires)
  if (stale.length > 0) await redis.hdel(key, ...stale);
  const registers = [...bySession]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([sessionId, seen]) => ({ sessionId, deviceId: seen.deviceId, lastSeenAt: new Date(seen.lastSeenAt).toISOString(), streams: seen.streams }));
  return { online: registers.length > 0, registers };
}

/** The locations seen since `since` (epoch ms); older entries are dropped from the set on the way. */
export async function locationsSeenSince(redis: RedisClient, prefix: string, since: number): Promise<string[]> {
  const key = presenceSeenKey(prefix);
  await redis.zremrangebyscore(key, '-inf', `(${since}`);
  return redis.zrange(key, 0, -1);
}
