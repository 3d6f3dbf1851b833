/**
 * Admission to the transition queue's partitions, per API node (docs/overload.md#admission): a write
 * whose job could not be done within its deadline is refused at once, not queued.
 *
 * The signal is the partition's queue wait, bounded through Little's law: a node admits at most
 * `limit = peak throughput × QUEUE_WAIT_TARGET` jobs in flight to a partition, where the peak
 * throughput is the most jobs per second this node has seen the partition's workers finish over
 * the last minute. With the limit full, a new job waits about QUEUE_WAIT_TARGET behind the
 * others (wait = in flight / throughput), far inside its deadline: so the queue never holds work
 * whose clients will have given up, goodput stays at the workers' capacity, and the queue is empty
 * again within QUEUE_WAIT_TARGET of the load falling. Beyond the limit a job is still admitted
 * while the oldest one in flight has waited less than QUEUE_WAIT_TARGET: the queue is evidently
 * moving (a burst after a quiet hour, before any throughput was seen); the limit never falls below
 * QUEUE_ADMISSION_FLOOR. Each criticality may fill only its share of either (criticality.ts).
 *
 * Every node counts its own jobs and its own share of the throughput: their limits add up to the
 * partition's. Nothing is read from Redis for it: the in-flight jobs and the replies are the
 * node's own.
 */
import type { Criticality } from '@pos/shared/openapi/operations';
import { fits } from './criticality';

/** The throughput is counted in buckets of this many ms, over PEAK_BUCKETS of them (5 s). */
const BUCKET_MS = 250;
const PEAK_BUCKETS = 20;
/** A rate is the jobs finished in this many consecutive buckets (1 s). */
const RATE_BUCKETS = 1000 / BUCKET_MS;
/**
 * The peaks of the last minute, each the highest of a 5 s slot: the limit holds to what the workers
 * sustained over it, so that a spell of low goodput (an overload that slows the machine) does not
 * shrink the limit and starve the workers in turn.
 */
const SLOT_MS = PEAK_BUCKETS * BUCKET_MS;
const MEMORY_SLOTS = 12;

export interface AdmissionSettings {
  /** QUEUE_WAIT_TARGET, ms. */
  targetWaitMs: number;
  /** QUEUE_ADMISSION_FLOOR. */
  floor: number;
}

/** One partition's jobs in flight from this node (by ticket, oldest first), and the rate its workers finish them. */
class PartitionAdmission {
  readonly admitted = new Map<number, number>();
  private readonly finished = new Float64Array(PEAK_BUCKETS);
  /** Index of the bucket that counts now, and the epoch bucket number it stands for. */
  private head = 0;
  private headBucket = 0;
  /** The highest 1 s rate of each of the last MEMORY_SLOTS slots, and the epoch slot number each stands for. */
  private readonly slotPeaks = new Float64Array(MEMORY_SLOTS);
  private readonly slotOf = new Float64Array(MEMORY_SLOTS).fill(-1);

  constructor(private readonly settings: AdmissionSettings) {}

  /** Counts a job its workers finished. */
  done(now: number): void {
    this.advance(now);
    this.finished[this.head]! += 1;
  }

  /** The most jobs finished in any second of the last five, per second. */
  peakRate(now: number): number {
    this.advance(now);
    // windows of consecutive buckets, oldest first (the one after the head is the oldest)
    let peak = 0;
    for (let start = 1; start + RATE_BUCKETS <= PEAK_BUCKETS + 1; start++) {
      let sum = 0;
      for (let k = 0; k < RATE_BUCKETS; k++) sum += this.finished[(this.head + start + k) % PEAK_BUCKETS]!;
      if (sum > peak) peak = sum;
    }
    return peak;
  }

  /** The most jobs finished in any second of the last minute (as far as the 5 s peaks read in it saw), per second. */
  sustainedRate(now: number): number {
    const recent = this.peakRate(now);
    const slot = Math.floor(now / SLOT_MS);
    const i = slot % MEMORY_SLOTS;
    if (this.slotOf[i] !== slot) [this.slotOf[i], this.slotPeaks[i]] = [slot, 0];
    if (recent > this.slotPeaks[i]!) this.slotPeaks[i] = recent;
    let sustained = 0;
    for (let k = 0; k < MEMORY_SLOTS; k++)
      if (slot - this.slotOf[k]! < MEMORY_SLOTS && this.slotPeaks[k]! > sustained) sustained = this.slotPeaks[k]!;
    return sustained;
  }

  limit(now: number): number {
    return Math.max(this.settings.floor, (this.sustainedRate(now) * this.settings.targetWaitMs) / 1000);
  }

  get inFlight(): number {
    return this.admitted.size;
  }

  /** How long the oldest job in flight has waited, ms (0 with none). */
  oldestWaitMs(now: number): number {
    for (const since of this.admitted.values()) return now - since;
    return 0;
  }

  /**
   * How long a job added now would wait, by Little's law; 0 with nothing in flight,
   * Infinity with jobs in flight and none finished lately.
   */
  waitEstimateMs(now: number): number {
    if (this.inFlight === 0) return 0;
    const rate = this.peakRate(now);
    return rate === 0 ? Infinity : (this.inFlight / rate) * 1000;
  }

  /**
   * Whether a job of `criticality` fits now: within its share of the
   * limit, or of the wait target while the queue moves.
   */
  admits(criticality: Criticality, now: number): boolean {
    return (
      fits(criticality, this.inFlight, this.limit(now)) ||
      fits(criticality, this.oldestWaitMs(now), this.settings.targetWaitMs)
    );
  }

  private advance(now: number): void {
    const bucket = Math.floor(now / BUCKET_MS);
    if (bucket === this.headBucket) return;
    const steps = Math.min(bucket - this.headBucket, PEAK_BUCKETS);
    for (let i = 0; i < steps; i++) {
      this.head = (this.head + 1) % PEAK_BUCKETS;
      this.finished[this.head] = 0;
    }
    this.headBucket = bucket;
  }
}

/** A request's admission (JobClient.admit): its ticket in its partition, whether a job took it. */
export interface Admitted {
  ticket: AdmissionTicket;
  taken: boolean;
}

export interface AdmissionTicket {
  partition: number;
  id: number;
}

/** What the node's admission shows, per partition (its gauges). */
export interface PartitionSignal {
  partition: number;
  inFlight: number;
  limit: number;
  waitEstimateSeconds: number;
}

export class QueueAdmission {
  private readonly partitions: PartitionAdmission[];
  private tickets = 0;
  /** When a job was last refused, epoch ms. */
  private refusedAt = -Infinity;

  constructor(
    partitionCount: number,
    private readonly settings: AdmissionSettings,
    private readonly clock: () => number = Date.now,
  ) {
    this.partitions = Array.from({ length: partitionCount }, () => new PartitionAdmission(settings));
  }

  /**
   * Whether any job was refused within the last `ms`: until then, nothing is
   * worth asking before the app (overload/early-refusal.ts).
   */
  refusedWithin(ms: number): boolean {
    return this.clock() - this.refusedAt <= ms;
  }

  /** Whether a job of `criticality` would be admitted to the partition now (nothing taken). */
  admits(partition: number, criticality: Criticality): boolean {
    const now = this.clock();
    if (this.partitions[partition]!.admits(criticality, now)) return true;
    this.refusedAt = now;
    return false;
  }

  /** Admits a job: its ticket, counted in flight until `settled`; undefined when refused. */
  acquire(partition: number, criticality: Criticality): AdmissionTicket | undefined {
    if (!this.admits(partition, criticality)) return undefined;
    const p = this.partitions[partition]!;
    const now = this.clock();
    const ticket = { partition, id: (this.tickets += 1) };
    p.admitted.set(ticket.id, now);
    return ticket;
  }

  /** An admitted job is over: `finished` when a worker did it (its reply or its record), else given up. */
  release(ticket: AdmissionTicket, finished: boolean): void {
    const p = this.partitions[ticket.partition]!;
    p.admitted.delete(ticket.id);
    if (finished) p.done(this.clock());
  }

  /** The seconds a refused request is told to wait: about the time the queue needs to make room. */
  retryAfterSeconds(partition: number): number {
    const wait = this.partitions[partition]!.waitEstimateMs(this.clock());
    return Number.isFinite(wait)
      ? Math.max(1, Math.ceil(wait / 1000))
      : Math.max(1, Math.ceil(this.settings.targetWaitMs / 1000));
  }

  signals(): PartitionSignal[] {
    const now = this.clock();
    return this.partitions.map((p, partition) => {
      const wait = p.waitEstimateMs(now);
      return { partition, inFlight: p.inFlight, limit: Math.round(p.limit(now)), waitEstimateSeconds: wait / 1000 };
    });
  }
}
