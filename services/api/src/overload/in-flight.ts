import type { Next } from 'koa';
import type { Criticality } from '@pos/shared/openapi/operations';
import type { AppContext } from '../context';
import { fits } from './criticality';
import { shed } from './shed';

/**
 * The node's bound on requests in flight (HTTP_MAX_IN_FLIGHT): past its share of it, a request is
 * refused at once, before its authentication or any read, the least critical first. What it
 * guards is the node's own memory and event loop when a dependency slows down and requests pile
 * up (a slow MongoDB makes every read last longer); an event stream counts while it opens, not
 * while it is open (streams have bounds of their own), and a rejected key not during its 401
 * delay (it gives its place back first: a flood of bad keys costs the flooder its own wait, not
 * anyone's capacity). `exempt` requests are counted, never refused.
 */
export class InFlightLimit {
  private inFlight = 0;

  constructor(private readonly max: number) {}

  get current(): number {
    return this.inFlight;
  }

  /** The middleware of an operation of this criticality. */
  guard(criticality: Criticality) {
    return async (ctx: AppContext, next: Next): Promise<void> => {
      if (!fits(criticality, this.inFlight, this.max)) shed(ctx.state, 1);
      this.inFlight += 1;
      let held = true;
      const release = () => {
        if (held) this.inFlight -= 1;
        held = false;
      };
      ctx.state.releaseInFlight = release;
      try {
        await next();
      } finally {
        release();
      }
    };
  }
}
