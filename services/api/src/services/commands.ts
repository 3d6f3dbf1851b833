import { ProblemError, problems } from '@pos/shared/domain/problem';
import { commandAcknowledgedOutbox } from '@pos/shared/events/outbox';
import type { Logger } from '@pos/shared/log';
import type { CommandsRepo } from '@pos/shared/store/commands';
import type { CommandDoc } from '@pos/shared/store/documents';

/** A location's live commands: listed, and acknowledged by a register or on its behalf. */
export class Commands {
  constructor(private readonly deps: { commands: Pick<CommandsRepo, 'acknowledge' | 'listLive'> }) {}

  /**
   * The one acknowledgement: the command leaves the work (a 404 problem when it is not live), and
   * the same write records the acknowledgement's event (streams drop acknowledged commands by themselves).
   */
  async acknowledge(locationId: string, number: number, log: Logger): Promise<CommandDoc> {
    const now = new Date();
    const command = await this.deps.commands.acknowledge(locationId, number, now, (after) =>
      commandAcknowledgedOutbox(after, now),
    );
    if (!command) throw new ProblemError(problems.commandNotFound());
    log.info({ commandNumber: number }, 'command acknowledged');
    return command;
  }

  listLive(locationId: string, after: number | undefined, limit: number): Promise<CommandDoc[]> {
    return this.deps.commands.listLive(locationId, new Date(), after, limit);
  }
}
