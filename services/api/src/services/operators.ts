import { hashApiKey } from '@pos/shared/auth/keys';
import { ProblemError, problems } from '@pos/shared/domain/problem';
import type { Announcer } from '@pos/shared/events/announcements';
import type { Logger } from '@pos/shared/log';
import type { OperatorInput } from '@pos/shared/schemas/requests';
import type { OperatorDoc } from '@pos/shared/store/documents';
import type { OperatorChanges, OperatorsRepo } from '@pos/shared/store/operators';
import type { Page } from '@pos/shared/store/page';
import { withTimeout } from '@pos/shared/util/timeout';

/** How long a change waits to tell the nodes; the change itself is written by then. */
const CHANGE_NOTICE_TIMEOUT_MS = 2_000;

export const OPERATOR_NOT_FOUND = 'Operator does not exist';

/**
 * Operator accounts. A token is shown once, in the answer that creates or rotates it, and stored
 * only as its hash; a change that takes rights away (delete, rotate, a new role or scope) is told
 * to every node before it is answered, so the old token or rights stop everywhere at once
 * (auth/operator-lookup.ts).
 */
export class Operators {
  constructor(
    private readonly deps: {
      operators: Pick<OperatorsRepo, 'create' | 'find' | 'list' | 'update' | 'rotateToken' | 'remove'>;
      announcer: Pick<Announcer, 'operatorChanged'>;
      newApiKey(): string;
    },
  ) {}

  async create(input: OperatorInput, log: Logger): Promise<{ doc: OperatorDoc; token: string }> {
    const token = this.deps.newApiKey();
    const doc = await this.deps.operators.create(
      { name: input.name, role: input.role, locationIds: input.locationIds, tokenHash: hashApiKey(token) },
      new Date(),
    );
    log.info({ targetOperatorId: doc._id, role: doc.role }, 'operator created');
    return { doc, token };
  }

  find(id: string): Promise<OperatorDoc | null> {
    return this.deps.operators.find(id);
  }

  list(page: Page<string>, within: readonly string[] | undefined): Promise<OperatorDoc[]> {
    return this.deps.operators.list(page, within);
  }

  async update(id: string, changes: OperatorChanges, log: Logger): Promise<OperatorDoc> {
    const doc = await this.deps.operators.update(id, changes);
    if (!doc) throw new ProblemError(problems.notFound(OPERATOR_NOT_FOUND));
    await this.tellNodes(doc._id, log);
    log.info({ targetOperatorId: doc._id, role: doc.role }, 'operator updated');
    return doc;
  }

  async rotateToken(id: string, log: Logger): Promise<{ doc: OperatorDoc; token: string }> {
    const token = this.deps.newApiKey();
    const doc = await this.deps.operators.rotateToken(id, hashApiKey(token), new Date());
    if (!doc) throw new ProblemError(problems.notFound(OPERATOR_NOT_FOUND));
    await this.tellNodes(doc._id, log);
    log.info({ targetOperatorId: doc._id }, 'operator token rotated');
    return { doc, token };
  }

  async remove(id: string, log: Logger): Promise<void> {
    if (!(await this.deps.operators.remove(id))) throw new ProblemError(problems.notFound(OPERATOR_NOT_FOUND));
    await this.tellNodes(id, log);
    log.info({ targetOperatorId: id }, 'operator deleted');
  }

  private async tellNodes(operatorId: string, log: Logger): Promise<void> {
    try {
      await withTimeout(this.deps.announcer.operatorChanged(operatorId), CHANGE_NOTICE_TIMEOUT_MS, 'Redis PUBLISH');
    } catch (err) {
      // Nodes whose subscriber lost Redis stop using their cache (its lease), and empty it on reconnect.
      log.warn({ err, operatorId }, 'could not tell the nodes of an operator change');
    }
  }
}
