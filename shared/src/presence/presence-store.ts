/**
 * Register presence in Redis (docs/presence-and-deadlines.md): what each API node saw of each
 * register (SERVICE) session, written behind, and the one reading of it that the admin API and
 * the worker's sweep share.
 *
 * A location's presence is one hash with a field per session and node, so that nodes never
 * overwrite each other (a session may hold streams on two nodes) and a node that dies leaves
 * fields that simply go stale. A field counts while it is younger than the window, and a field
 * holding streams also while its node's heartbeat is: a node does not rewrite the fields of the
 * streams it holds, it writes its heartbeat (one field of one hash) every quarter of the window,
 * so that a node holding the streams of thousands of locations keeps them present with one command
 * rather than thousands. Fields are removed when read stale; the sweep reads every location seen
 * within two windows, so a hash outlives its last field by no more. Beside them, one sorted set of
 * the locations seen (by when), which the sweep reads to learn which locations to look at; a node's
 * heartbeat refreshes its streams' locations there.
 */
import type { PresenceRegister } from '../schemas/responses';
import { isCluster, type RedisClient } from '../redis';

export const presenceKey = (prefix: string, locationId: string): string => `${prefix}:presence:loc:${locationId}`;
export const presenceSeenKey = (prefix: string): string => `${prefix}:presence:seen`;
/** The API nodes' heartbeats: node id to the epoch ms of its last. */
export const presenceNodesKey = (prefix: string): string => `${prefix}:presence:nodes`;

/** One node's sighting of one session, as its hash field holds it. */
export interface Sighting {
  sessionId: string;
  deviceId: string;
  /** Epoch ms of its last request (a stream's opening or end included). */
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
 * Writes a node's sightings, by location: each location's hash fields, and the locations' places
 * in the seen set. One round trip on one Redis, however many locations; on a cluster the keys
 * live on different shards, so each location's hash goes as a transaction of its own beside one
 * ZADD of them all. Each hash also loses any expiry (`PERSIST`): versions before the heartbeat
 * set one, which would otherwise take this node's stream fields with it.
 */
export async function writeSightings(
  redis: RedisClient,
  prefix: string,
  nodeId: string,
  byLocation: Map<string, Sighting[]>,
): Promise<void> {
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
      ...hashes.map(({ key, fields }) => redis.multi().hset(key, fields).persist(key).exec()),
      redis.zadd(presenceSeenKey(prefix), ...seen),
    ]);
    return;
  }
  const pipeline = redis.pipeline();
  for (const { key, fields } of hashes) pipeline.hset(key, fields).persist(key);
  await execAll(pipeline.zadd(presenceSeenKey(prefix), ...seen));
}

/**
 * A node's heartbeat at `now`: the fields of the streams it holds count while it is younger than
 * the window. Their locations go in the seen set again, so that the sweep keeps reading them.
 */
export async function writeHeartbeat(
  redis: RedisClient,
  prefix: string,
  nodeId: string,
  now: number,
  streamLocations: string[],
): Promise<void> {
  const seen = streamLocations.flatMap((locationId) => [now, locationId]);
  if (isCluster(redis)) {
    await Promise.all([
      redis.hset(presenceNodesKey(prefix), nodeId, now),
      ...(seen.length > 0 ? [redis.zadd(presenceSeenKey(prefix), ...seen)] : []),
    ]);
    return;
  }
  const pipeline = redis.pipeline().hset(presenceNodesKey(prefix), nodeId, now);
  await execAll(seen.length > 0 ? pipeline.zadd(presenceSeenKey(prefix), ...seen) : pipeline);
}

/** The nodes' heartbeats, by node id. */
export async function readHeartbeats(redis: RedisClient, prefix: string): Promise<Map<string, number>> {
  return new Map(
    Object.entries(await redis.hgetall(presenceNodesKey(prefix))).map(([nodeId, at]) => [nodeId, Number(at)]),
  );
}

/** Forgets the heartbeats (of `heartbeats`, as read) older than `before`: nodes long gone. */
export async function pruneHeartbeats(
  redis: RedisClient,
  prefix: string,
  heartbeats: Map<string, number>,
  before: number,
): Promise<void> {
  const gone = [...heartbeats].filter(([, at]) => !(at >= before)).map(([nodeId]) => nodeId);
  if (gone.length > 0) await redis.hdel(presenceNodesKey(prefix), ...gone);
}

/** Removes a location's presence (a location that is no more). */
export async function clearPresence(redis: RedisClient, prefix: string, locationId: string): Promise<void> {
  await redis.del(presenceKey(prefix, locationId));
}

async function execAll(pipeline: ReturnType<RedisClient['pipeline']>): Promise<void> {
  for (const [err] of (await pipeline.exec()) ?? []) if (err) throw err;
}

export interface Presence {
  online: boolean;
  /** Sessions seen within the window, by session id, their nodes' sightings merged. */
  registers: PresenceRegister[];
}

/**
 * A location's presence at `now`: the sessions seen within the window (a field older than that
 * counts for nothing, unless it holds streams and its node's heartbeat is within the window:
 * then it counts as seen at that heartbeat), each with its streams summed over the nodes. Online
 * when any is. Fields gone stale are removed on the way (HDEL). `heartbeats`, when the caller
 * has read them (the sweep, once for all locations), spares reading those the fields need.
 */
export async function readPresence(
  redis: RedisClient,
  prefix: string,
  locationId: string,
  windowMs: number,
  now: number,
  heartbeats?: Map<string, number>,
): Promise<Presence> {
  const key = presenceKey(prefix, locationId);
  const since = now - windowMs;
  const hash = fieldsOf(await redis.hgetall(key));
  const beats = heartbeats ?? (await heartbeatsOf(redis, prefix, heartbeatsNeeded(hash, since)));
  const { presence, stale } = presenceOf(hash, beats, since);
  if (stale.length > 0) await redis.hdel(key, ...stale);
  return presence;
}

export interface Field {
  field: string;
  sessionId: string;
  nodeId: string;
  stored: StoredSighting;
}

/** A location's hash as read: its sightings, and the fields that hold none (left by an older version, or damaged). */
export function fieldsOf(hash: Record<string, string>): { fields: Field[]; unreadable: string[] } {
  const fields: Field[] = [];
  const unreadable: string[] = [];
  for (const [field, value] of Object.entries(hash)) {
    const slash = field.lastIndexOf('/');
    const stored = parseSighting(value);
    if (stored) fields.push({ field, sessionId: field.slice(0, slash), nodeId: field.slice(slash + 1), stored });
    else unreadable.push(field);
  }
  return { fields, unreadable };
}

/** The nodes whose heartbeats decide a hash's presence: those of stream fields older than `since`. */
export function heartbeatsNeeded(hash: ReturnType<typeof fieldsOf>, since: number): string[] {
  return hash.fields.filter(({ stored }) => stored.s > 0 && stored.l <= since).map(({ nodeId }) => nodeId);
}

/**
 * A location's presence from its hash and the nodes' heartbeats: the sessions seen after `since`,
 * a field holding streams counting as seen at its node's heartbeat when that is later; each session's
 * streams summed over its nodes, sorted by session id. `stale`: the fields to remove.
 */
export function presenceOf(
  hash: ReturnType<typeof fieldsOf>,
  heartbeats: Map<string, number>,
  since: number,
): { presence: Presence; stale: string[] } {
  const { fields } = hash;
  const stale = [...hash.unreadable];
  const bySession = new Map<string, { deviceId: string; lastSeenAt: number; streams: number }>();
  for (const { field, sessionId, nodeId, stored } of fields) {
    const beat = stored.s > 0 ? (heartbeats.get(nodeId) ?? 0) : 0;
    const lastSeenAt = Math.max(stored.l, beat);
    if (lastSeenAt <= since) {
      stale.push(field);
      continue;
    }
    const seen = bySession.get(sessionId);
    if (!seen) bySession.set(sessionId, { deviceId: stored.d, lastSeenAt, streams: stored.s });
    else {
      seen.lastSeenAt = Math.max(seen.lastSeenAt, lastSeenAt);
      seen.streams += stored.s;
    }
  }
  const registers = [...bySession]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([sessionId, seen]) => ({
      sessionId,
      deviceId: seen.deviceId,
      lastSeenAt: new Date(seen.lastSeenAt).toISOString(),
      streams: seen.streams,
    }));
  return { presence: { online: registers.length > 0, registers }, stale };
}

/** A field's value, or undefined when it is not one (left by an older version, or damaged): removed as stale. */
function parseSighting(value: string): StoredSighting | undefined {
  try {
    const stored = JSON.parse(value) as Partial<StoredSighting>;
    if (typeof stored.l !== 'number') return undefined;
    return { d: String(stored.d), l: stored.l, s: Number(stored.s) || 0 };
  } catch {
    return undefined;
  }
}

/** The heartbeats of `nodeIds` (one HMGET), by node id. */
async function heartbeatsOf(redis: RedisClient, prefix: string, nodeIds: string[]): Promise<Map<string, number>> {
  const unique = [...new Set(nodeIds)];
  if (unique.length === 0) return new Map();
  const beats = await redis.hmget(presenceNodesKey(prefix), ...unique);
  return new Map(unique.map((nodeId, i) => [nodeId, Number(beats[i] ?? 0)]));
}

/** The locations seen since `since` (epoch ms); older entries are dropped from the set on the way. */
export async function locationsSeenSince(redis: RedisClient, prefix: string, since: number): Promise<string[]> {
  const key = presenceSeenKey(prefix);
  await redis.zremrangebyscore(key, '-inf', `(${since}`);
  return redis.zrange(key, 0, -1);
}
