import type { CommandRecord } from '@pos/shared/domain/records';
import { Column } from './column';
import { commandLabel, tableLabel } from './format';

export interface CommandsColumnProps {
  /** The live commands, oldest first. */
  commands: CommandRecord[];
  /** False for a viewer: no Acknowledge. */
  canAct: boolean;
  busy: ReadonlySet<string>;
  onAcknowledge(command: CommandRecord): void;
}

/** The live commands, each with Acknowledge. */
export function CommandsColumn({ commands, canAct, busy, onAcknowledge }: CommandsColumnProps) {
  return (
    <Column name="commands" title="Commands" count={`${commands.length} live`}>
      {commands.length === 0 ? (
        <p class="empty">No commands.</p>
      ) : (
        <ul class="list" role="list">
          {commands.map((command) => (
            <li key={command.number}>
              <article class="card command" aria-labelledby={`command-${command.number}`}>
                <h3 id={`command-${command.number}`}>
                  {commandLabel(command)} <span class="sub">{tableLabel(command.tableNumber)}</span>
                </h3>
                <span class="number">Command {command.number}</span>
                {canAct && (
                  <button
                    type="button"
                    class="primary"
                    aria-label={`Acknowledge command ${command.number}`}
                    disabled={busy.has(`command-${command.number}`)}
                    onClick={() => onAcknowledge(command)}
                  >
                    Acknowledge
                  </button>
                )}
              </article>
            </li>
          ))}
        </ul>
      )}
    </Column>
  );
}
