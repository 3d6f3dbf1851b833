import { ProblemError, problems } from '@pos/shared/domain/problem';
import type { EventPublisher } from '@pos/shared/events/location-events';
import type { Logger } from '@pos/shared/log';
import type { CommandsRepo } from '@pos/shared/store/commands';
import type { CommandDoc } from '@pos/shared/store/documents';

/** A location's live commands: listed, and acknowledged by a register or on its behalf. */
export class Commands {
  constructor(private readonly deps: { commands: Pick<CommandsRepo, 'acknowledge' | 'listLive'>; events: Pick<EventPublisher, 'commandAcknowledged'> }) {}

  /**
   * The one acknowledgement: the command leaves the work (a 404 problem when it is not live), and
   * the acknowledgement is offered to webhooks (a failure to offer it does not undo it).
   */
  async acknowledge(locationId: string, number: number, log: Logger): Promise<CommandDoc> {
    const command = await this.deps.commands.acknowledge(locationId, number, new Date());
    if (!command) throw new ProblemError(problems.commandNotFound());
    log.info({ commandNumber: number }, 'command acknowledged');
    await this.deps.events.commandAcknowledged(command).catch((err: unknown) => log.warn({ err }, 'could not offer the acknowledgement to webhooks'));
    return command;
  }

  listLive(locationId: string, after: number | undefined, limit: number): Promise<CommandDoc[]> {
    return this.deps.commands.listLive(locationId, new Date(), after, limit);
  }
}
