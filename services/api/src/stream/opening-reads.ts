import { type GroupCommit, groupCommit } from '@pos/shared/store/group-commit';
import { Opening, OpeningRead, OpeningRepos, readOpenings } from './replay';

/**
 * Streams opening together share their reads (a group commit): those that ask while a read is in
 * flight go together as the next, in two MongoDB commands however many they are. When registers
 * reconnect to a node by the thousand (a deploy, a Redis failover) and MongoDB is what they wait
 * for, their reads do not queue one behind another.
 */
export class OpeningReads {
  private readonly loader: GroupCommit<OpeningRead, Opening>;

  constructor(repos: OpeningRepos) {
    this.loader = groupCommit((reads) => readOpenings(repos, reads, new Date()), OPENINGS_PER_READ);
  }

  read(read: OpeningRead): Promise<Opening> {
    return this.loader.load(read);
  }
}

/** Streams one read serves at most (its `$in` lists of locations and sessions). */
const OPENINGS_PER_READ = 200;
