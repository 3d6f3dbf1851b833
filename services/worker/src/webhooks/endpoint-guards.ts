/**
 * Each subscription's share of this worker's delivery slots, so that one endpoint that hangs or
 * fails never holds up another's deliveries: a bulkhead (at most WEBHOOK_ENDPOINT_CONCURRENCY
 * attempts at once) and a circuit breaker (after WEBHOOK_CIRCUIT_FAILURES failed attempts in a
 * row, no attempt until a probe after WEBHOOK_CIRCUIT_COOLDOWN, doubling per failed probe up to
 * ten times it). Both are cockatiel's policies; a delivery they hold back is not attempted, and
 * waits on the queue (see delivery.ts) until a slot frees or the probe is due.
 */
import {
  BrokenCircuitError,
  BulkheadRejectedError,
  bulkhead,
  circuitBreaker,
  CircuitState,
  ConsecutiveBreaker,
  DelegateBackoff,
  handleWhenResult,
  wrap,
} from 'cockatiel';
import { LRUCache } from 'lru-cache';
import type { WebhooksConfig } from '@pos/shared/config';
import { doubling } from '@pos/shared/util/doubling-pause';

/** A delivery held back without an attempt, and when to try it again. */
export class DeliveryHeld extends Error {
  constructor(
    readonly reason: 'endpoint-busy' | 'circuit-open',
    readonly retryAt: number,
  ) {
    super(
      reason === 'endpoint-busy'
        ? 'the endpoint has its share of attempts under way'
        : "the endpoint's circuit is open",
    );
  }
}

/** Subscriptions one worker keeps a guard for; the least recently used beyond are forgotten (closed). */
const MAX_GUARDS = 10_000;
/**
 * A busy endpoint's delivery is tried again after about this long (a slot frees at the latest after WEBHOOK_TIMEOUT).
 */
const BUSY_RETRY_MS = 1_000;
/** How long the circuit waits at most, in cooldowns. */
const MAX_COOLDOWNS = 10;

type Settings = Pick<WebhooksConfig, 'endpointConcurrency' | 'circuitFailures' | 'circuitCooldownMs'>;

class EndpointGuard {
  /** When the open circuit lets its probe through. */
  private probeAt = 0;
  private readonly breaker;
  private readonly policy;

  constructor(settings: Settings, ok: (result: unknown) => boolean) {
    const { endpointConcurrency, circuitFailures, circuitCooldownMs } = settings;
    this.breaker = circuitBreaker(
      handleWhenResult((result) => !ok(result)),
      {
        breaker: new ConsecutiveBreaker(circuitFailures),
        halfOpenAfter: new DelegateBackoff<{ attempt: number }>(({ attempt }) => {
          const wait = doubling(attempt, [circuitCooldownMs, circuitCooldownMs * MAX_COOLDOWNS]);
          this.probeAt = Date.now() + wait;
          return wait;
        }),
      },
    );
    this.policy = wrap(bulkhead(endpointConcurrency, 0), this.breaker);
  }

  get open(): boolean {
    return this.breaker.state === CircuitState.Open;
  }

  async run<T>(attempt: () => Promise<T>): Promise<T> {
    try {
      return await this.policy.execute(attempt);
    } catch (err) {
      // a little spread, so that an endpoint's held deliveries do not all come back at once
      const jitter = Math.random() * 250;
      if (err instanceof BulkheadRejectedError)
        throw new DeliveryHeld('endpoint-busy', Date.now() + BUSY_RETRY_MS + jitter);
      if (err instanceof BrokenCircuitError)
        throw new DeliveryHeld('circuit-open', Math.max(this.probeAt, Date.now()) + jitter);
      throw err;
    }
  }
}

export class EndpointGuards {
  private readonly guards = new LRUCache<string, EndpointGuard>({ max: MAX_GUARDS });

  constructor(
    private readonly settings: Settings,
    /** Whether an attempt's result is a success (a failure counts towards the circuit). */
    private readonly ok: (result: unknown) => boolean,
  ) {}

  /** Runs one attempt to the subscription's endpoint within its share; throws DeliveryHeld when held back. */
  run<T>(subscriptionId: string, attempt: () => Promise<T>): Promise<T> {
    let guard = this.guards.get(subscriptionId);
    if (!guard) this.guards.set(subscriptionId, (guard = new EndpointGuard(this.settings, this.ok)));
    return guard.run(attempt);
  }

  /** Endpoints whose circuit is open on this worker (`pos_webhook_circuits_open`). */
  get openCircuits(): number {
    let open = 0;
    for (const guard of this.guards.values()) if (guard.open) open += 1;
    return open;
  }
}
